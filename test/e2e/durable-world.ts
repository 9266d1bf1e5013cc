/**
 * What the durable-scheduler end-to-end tests share: the settings docs/trigger.md recommends, a trigger
 * workflow polled every second, n8n's poller_state row of a trigger, and small waits.
 */

import { CREDENTIAL_TYPE, NODE_TYPES, type N8nOptions, type Runtime } from '../n8n/runtime';
import { readN8nRow, shortPollBudgetEnv } from '../n8n/polls';
import { TRIGGER_NODE, workflow, type NodeJson, type WorkflowJson } from '../n8n/workflow-json';

export const credential = (id: string) => ({ id, name: `Outreach (${id})` });

/** What docs/trigger.md recommends on n8n 2.36+, with a poll timeout of 4 s (a 2 s budget). */
export const DURABLE_ENV = {
	...shortPollBudgetEnv(4),
	N8N_USE_WORKFLOW_PUBLICATION_SERVICE: 'true',
	N8N_POLLER_DURABLE_CURSORS_ENABLED: 'true',
};

export type Json = Record<string, unknown>;
export interface Execution {
	id: string;
	status: string;
	data?: {
		resultData: {
			runData: Record<string, Array<{ data?: { main: Array<Array<{ json: Json }>> } }>>;
		};
	};
}

export const tick = async (ms: number) => await new Promise((resolve) => setTimeout(resolve, ms));
export async function waitFor<T>(
	what: string,
	probe: () => Promise<T | undefined> | T | undefined,
	ms: number,
): Promise<T> {
	const deadline = Date.now() + ms;
	for (;;) {
		const value = await probe();
		if (value !== undefined) return value;
		if (Date.now() > deadline)
			throw new Error(`timed out after ${ms / 1000} s waiting for ${what}`);
		await tick(250);
	}
}

/** Trigger on one lead's messages, polled every second of every minute. */
export function triggerWorkflow(id: string, leadId: string, credentialId: string): WorkflowJson {
	const node: NodeJson = {
		id: `${id}-trigger`,
		name: TRIGGER_NODE,
		type: NODE_TYPES.trigger,
		typeVersion: 1,
		position: [0, 0],
		parameters: {
			pollTimes: {
				item: Array.from({ length: 60 }, (_, s) => ({
					mode: 'custom',
					cronExpression: `${s} * * * * *`,
				})),
			},
			filters: { leadId: { __rl: true, mode: 'id', value: leadId } },
			options: {},
		},
		credentials: { [CREDENTIAL_TYPE]: credential(credentialId) },
	};
	return workflow(id, `e2e: ${id}`, [node]);
}

/** A poll node's row of n8n's poller_state table (its durable cursor and backoff). */
export async function pollerState(
	runtime: Runtime,
	options: N8nOptions,
	workflowId: string,
): Promise<Json | undefined> {
	return (await readN8nRow(runtime, options, 'SELECT * FROM poller_state WHERE workflowId = ?', [
		workflowId,
	])) as Json | undefined;
}
