/**
 * One simulated n8n process: the action node's real execute() (routing/route.ts: items started up to
 * ITEMS_IN_FLIGHT at a time, each through transport/request.ts's paced pipeline) in one execution of its
 * items, with Continue On Fail, its HTTP helper answered by the simulated service.
 *
 * Each process gets its own Base URL host, so its pacing state (a key of the pacing's map: window, queue,
 * timer, what it infers of others) is its own, as in a process of its own: the service counts all of them
 * on the one API key. The pacing's only state beyond its keys is the sweep of keys idle for 15 minutes.
 */
import type { IExecuteFunctions, INode, INodeExecutionData } from 'n8n-workflow';

import { executeOperation } from '../../nodes/OutreachAutomation/routing/route';
import { normalizeBaseUrl, windowKey } from '../../nodes/OutreachAutomation/transport/baseUrl';
import { peekWindow } from '../../nodes/OutreachAutomation/transport/pacing';
import type { VirtualClock } from './clock';
import { countLooks, looksOf } from './looks';
import type { ProcessPlan } from './scenario';
import type { Service } from './service';

export const API_KEY = 'sim-key-7c1d0a';

const NODE: INode = {
	id: 'sim',
	name: 'Outreach Automation',
	type: 'n8n-nodes-outreach-automation.outreachAutomation',
	typeVersion: 1,
	position: [0, 0],
	parameters: {},
};

export interface ProcessResult {
	/** Per item: undefined while running, else whether it succeeded and, if not, the error's message. */
	outcomes: Array<{ ok: boolean; message?: string } | undefined>;
	/** When its last item ended (virtual epoch ms). */
	endedAt: number | undefined;
	/** The node itself failed (not an item): its message. */
	crashed?: string;
	looks: number;
}

export function itemName(process: number, item: number): string {
	return `p${process}i${item}`;
}

export function baseUrlOf(process: number): string {
	return `https://p${process}.api.sim.example`;
}

/** Starts process `index` at its start time; its result fills in as it runs. */
export function startProcess(
	index: number,
	plan: ProcessPlan,
	clock: VirtualClock,
	service: Service,
): ProcessResult {
	const result: ProcessResult = {
		outcomes: new Array(plan.items).fill(undefined),
		endedAt: undefined,
		looks: 0,
	};
	const inputs: INodeExecutionData[] = Array.from({ length: plan.items }, (_, i) => ({
		json: { i },
	}));
	const fixed: Record<string, unknown> = { resource: 'lead', operation: plan.operation };
	const cancel = new AbortController();
	const ctx = {
		getInputData: () => inputs,
		getNode: () => NODE,
		continueOnFail: () => true,
		getExecutionCancelSignal: () => cancel.signal,
		getCredentials: async () => ({ baseUrl: baseUrlOf(plan.host ?? index), apiKey: API_KEY }),
		getNodeParameter: (name: string, itemIndex: number, fallback?: unknown) => {
			if (name in fixed) return fixed[name];
			if (name === 'firstName') return itemName(index, itemIndex);
			if (name === 'leadId') return `ld_${itemName(index, itemIndex)}`;
			return fallback;
		},
		addExecutionHints: () => undefined,
		helpers: {
			httpRequestWithAuthentication: async (
				_type: string,
				options: Parameters<Service['send']>[1],
			) => await service.send(index, options),
		},
	} as unknown as IExecuteFunctions;

	countLooks();
	clock.at(clock.now() + plan.startMs, () => {
		executeOperation.call(ctx).then(
			([output]) => {
				for (const item of output) {
					const at = (item.pairedItem as { item: number }).item;
					result.outcomes[at] = item.error
						? { ok: false, message: item.error.message }
						: { ok: true };
				}
				result.endedAt = clock.now();
				result.looks = looksOf(
					peekWindow(windowKey(normalizeBaseUrl(baseUrlOf(plan.host ?? index)), API_KEY)),
				);
			},
			(error: Error) => {
				result.crashed = error.message;
				result.endedAt = clock.now();
			},
		);
	});
	return result;
}
