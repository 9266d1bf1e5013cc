/**
 * One Node process for the volume scenario (test/bench/volume.ts) and the upsert's at volume
 * (upsert-volume.ts): runs N items through Lead > Create, or the parameters and items a job gives (Create or
 * Update), or through a no-op node or n8n's HTTP helper alone (n8n's own cost), in n8n's engine in one
 * execution, and reports the wall time or the heap kept, read after a full garbage collection every second.
 */
import type { IDataObject, INodeParameters } from 'n8n-workflow';

import { runNode } from '../engine/harness';
import { heapGc, heapWatch } from '../engine/heap';

export interface VolumeJob {
	baseUrl: string;
	apiKey: string;
	items: number;
	/** Instead of Lead > Create: a no-op node (n8n's own cost), or n8n's HTTP helper alone (no pacing). */
	node?: 'testNoOp' | 'testRawHttp';
	/**
	 * Read the heap kept (a full garbage collection every second). Off for the run whose wall time counts:
	 * at 100,000 items those collections cost more time than the pacing itself.
	 */
	heap?: boolean;
	/** The node's parameters instead of Lead > Create's (the no-op reads its First Name only). */
	parameters?: INodeParameters;
	/** The input items instead of `items` generated ones (`items` is then their number). */
	inputs?: IDataObject[];
}

export interface VolumeFigures {
	wallMs: number;
	/** CPU time of this process over the run (user + system, ms): what the machine's load does not stretch. */
	cpuMs: number;
	/** The largest heap growth over the start, read after full collections (bytes; 0 when not read). */
	heapGrowth: number;
	/**
	 * What the heap holds once the execution is over (after a full collection), its result still referenced:
	 * what the run leaves behind beyond its output (bytes; 0 when not read).
	 */
	retained: number;
	returned: number;
	/** Output items per `outcome` field (Create or Update: created, updated, unchanged). */
	outcomes: Record<string, number>;
	failed: number;
	firstError?: string;
}

process.on('message', (job: VolumeJob) => {
	void (async () => {
		const gc = job.heap ? heapGc() : undefined;
		gc?.();
		const base = process.memoryUsage().heapUsed;
		const heap = job.heap ? heapWatch() : undefined;
		const inputs = job.inputs ?? Array.from({ length: job.items }, (_, i) => ({ i }));
		const startedAt = Date.now();
		const cpuAtStart = process.cpuUsage();
		const { items, error } = await runNode(
			{ baseUrl: job.baseUrl, apiKey: job.apiKey },
			job.parameters ?? {
				resource: 'lead',
				operation: 'create',
				firstName: '={{ "Lead " + $json.i }}',
			},
			inputs,
			{ continueOnFail: true, nodeType: job.node },
		);
		const wallMs = Date.now() - startedAt;
		const cpu = process.cpuUsage(cpuAtStart);
		const heapGrowth = heap?.stop() ?? 0;
		gc?.();
		const retained = gc ? process.memoryUsage().heapUsed - base : 0;
		const failed = items.filter((item) => item.error);
		const outcomes: Record<string, number> = {};
		for (const item of items) {
			const outcome = item.error ? undefined : item.json.outcome;
			if (typeof outcome === 'string') outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
		}
		const figures: VolumeFigures = {
			wallMs,
			cpuMs: Math.round((cpu.user + cpu.system) / 1000),
			heapGrowth,
			retained,
			returned: items.length - failed.length,
			outcomes,
			failed: failed.length + (error ? 1 : 0),
			firstError: error?.message ?? (failed[0]?.json.error as string | undefined),
		};
		process.send?.(figures, () => process.exit(0));
	})();
});
process.send?.({ ready: true });
