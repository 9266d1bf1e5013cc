/**
 * One Node process for the volume scenario (test/bench/volume.ts): runs N items through Lead > Create (or
 * through a no-op node, or n8n's HTTP helper alone, for n8n's own cost) in n8n's engine in one execution, and reports
 * the wall time or the heap kept, read after a full garbage collection every second.
 */
import { runNode } from '../engine/harness';
import { heapWatch } from '../engine/heap';

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
}

export interface VolumeFigures {
	wallMs: number;
	/** The largest heap growth over the start, read after full collections (bytes; 0 when not read). */
	heapGrowth: number;
	returned: number;
	failed: number;
	firstError?: string;
}

process.on('message', (job: VolumeJob) => {
	void (async () => {
		const heap = job.heap ? heapWatch() : undefined;
		const inputs = Array.from({ length: job.items }, (_, i) => ({ i }));
		const startedAt = Date.now();
		const { items, error } = await runNode(
			{ baseUrl: job.baseUrl, apiKey: job.apiKey },
			{ resource: 'lead', operation: 'create', firstName: '={{ "Lead " + $json.i }}' },
			inputs,
			{ continueOnFail: true, nodeType: job.node },
		);
		const wallMs = Date.now() - startedAt;
		const heapGrowth = heap?.stop() ?? 0;
		const failed = items.filter((item) => item.error);
		const figures: VolumeFigures = {
			wallMs,
			heapGrowth,
			returned: items.length - failed.length,
			failed: failed.length + (error ? 1 : 0),
			firstError: error?.message ?? (failed[0]?.json.error as string | undefined),
		};
		process.send?.(figures, () => process.exit(0));
	})();
});
process.send?.({ ready: true });
