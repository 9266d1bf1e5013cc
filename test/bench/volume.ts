/**
 * Scenario 12 (`--only volume`): one execution with 10,000 and 100,000 (quick: 2,000 and 10,000) Lead > Create
 * items at 1,000 requests per 1-s window, in n8n's engine in a process of its own, against a sandbox in the
 * bench's process; beside it, n8n's own cost for the same items (a no-op node that evaluates the same
 * expression per item) and its HTTP helper sending the same requests unpaced (up to 20,000). Prints the heap
 * kept (read after full garbage collections every second) and, from a run of its own without those
 * collections, the wall time against the floor plus n8n's own.
 */
import path from 'node:path';

import { forkEngineProcess } from '../engine/processes';
import { startSandbox } from '../sandbox/server';
import { fmt, scenario, type Scenario, type ScenarioResult, type Target } from './figures';
import type { VolumeFigures, VolumeJob } from './volume-worker';
import { log } from './world';

const LIMIT = 1000;
const WINDOW_MS = 1000;
const KEY = 'bench-volume-key-6a1f';
const MB = 1024 * 1024;
/** Heap growth allowed per size (the targets: 100 MB for 10,000, 400 MB for 100,000). */
const HEAP_TARGET_MB: Record<number, number> = { 2000: 100, 10_000: 100, 100_000: 400 };
const RAW_HTTP_MAX_ITEMS = 20_000;

/** Runs one job in a fresh process (so one run's heap says nothing of the next's). */
export async function inWorker(job: VolumeJob): Promise<VolumeFigures> {
	const child = forkEngineProcess(path.join(__dirname, 'volume-worker.ts'), ['--expose-gc']);
	return await new Promise((resolve, reject) => {
		child.once('exit', (code) => reject(new Error(`volume worker exited with ${code}`)));
		child.on('message', (message: { ready?: boolean } & Partial<VolumeFigures>) => {
			if (message.ready) child.send(job);
			else {
				child.removeAllListeners('exit');
				resolve(message as VolumeFigures);
			}
		});
	});
}

export const volume: Scenario = {
	key: 'volume',
	async run(world) {
		const sizes = world.sizes.mode === 'quick' ? [2000, 10_000] : [10_000, 100_000];
		const sandbox = await startSandbox({
			apiKeys: [KEY],
			seed: { leads: 0, campaigns: 0, messages: 0 },
			rateLimit: LIMIT,
			windowMs: WINDOW_MS,
			resetFormat: 'epoch-ms',
		});
		const results: ScenarioResult[] = [];
		try {
			for (const n of sizes) {
				const result = scenario(
					world,
					`12.${n / 1000}k`,
					'volume',
					`Lead > Create, ${fmt(n)} items in one execution at ${fmt(LIMIT)} per 1-s window`,
					'package',
					"n8n's engine in a process of its own; beside it a no-op node over the same items",
					n,
				);
				log(`volume: ${fmt(n)} items, n8n's own cost first`);
				const job = { baseUrl: sandbox.url, apiKey: KEY, items: n };
				// Each twice: once for the wall time, once for the heap (its collections slow the run).
				const twice = async (node?: VolumeJob['node']) => {
					const wall = await inWorker({ ...job, node });
					const heap = await inWorker({ ...job, node, heap: true });
					return { ...wall, heapGrowth: heap.heapGrowth, failed: wall.failed + heap.failed };
				};
				const own = await twice('testNoOp');
				// n8n's HTTP helper alone, all at once, against a limit it never reaches: what the requests
				// cost n8n itself (a new connection each), with no pacing at all.
				// Above 20,000 all at once would open more sockets than a process may: not measured there.
				let http: VolumeFigures | undefined;
				if (n <= RAW_HTTP_MAX_ITEMS) {
					log(`volume: ${fmt(n)} requests through n8n's HTTP helper alone`);
					sandbox.config({ rateLimit: 10_000_000 });
					http = await twice('testRawHttp');
					sandbox.config({ rateLimit: LIMIT });
				}
				log(`volume: ${fmt(n)} Lead > Create items, for the heap`);
				sandbox.reset({ leads: 0, campaigns: 0, messages: 0 });
				const heap = await inWorker({ ...job, heap: true });
				const heapStats = sandbox.stats();
				log(`volume: ${fmt(n)} Lead > Create items, for the wall time`);
				sandbox.reset({ leads: 0, campaigns: 0, messages: 0 });
				const figures = { ...(await inWorker(job)), heapGrowth: heap.heapGrowth };
				const stats = sandbox.stats();
				const heapRunComplete =
					heap.failed === 0 && heapStats.creates.lead === n && heapStats.duplicateCreates === 0;
				const floorMs = (Math.ceil(n / LIMIT) - 1) * WINDOW_MS;
				// n8n's own time: its engine over the items (the no-op) and, where measured, its HTTP helper
				// sending them unpaced, which on a small machine takes longer than the floor itself.
				const boundMs = 1.25 * Math.max(floorMs, http?.wallMs ?? 0) + own.wallMs;
				result.goals = { failuresOnly: true };
				result.runs.push({
					run: 1,
					requests: stats.requests,
					rateLimited: stats.rateLimited,
					maxConcurrent: stats.maxConcurrent,
					failedExecution: false,
					failedItems: figures.failed,
					returned: figures.returned,
					distinct: stats.creates.lead,
					expected: n,
					complete:
						heapRunComplete &&
						figures.failed === 0 &&
						stats.creates.lead === n &&
						stats.duplicateCreates === 0,
					duplicatesCreated: stats.duplicateCreates,
					wallMs: figures.wallMs,
					spanMs: figures.wallMs,
					afterFirstMs: figures.wallMs,
					error: figures.firstError,
				});
				const line =
					`${fmt(n)} items: ${fmt(stats.requests)} requests, ${stats.rateLimited} answered 429, ` +
					`${figures.failed} failed (the heap's run: ${heapStats.rateLimited} 429s, ${heap.failed} failed); heap grew ${(figures.heapGrowth / MB).toFixed(0)} MB ` +
					`(n8n's own: ${(own.heapGrowth / MB).toFixed(0)} MB); wall ${(figures.wallMs / 1000).toFixed(1)} s, ` +
					`floor ${(floorMs / 1000).toFixed(0)} s + n8n's own ${(own.wallMs / 1000).toFixed(1)} s ` +
					(http
						? `; n8n's HTTP helper alone, unpaced: ${(http.wallMs / 1000).toFixed(1)} s, heap ${(http.heapGrowth / MB).toFixed(0)} MB`
						: '') +
					`; bound 1.25 x max(floor, HTTP alone) + no-op: ${(boundMs / 1000).toFixed(1)} s`;
				log(`volume: ${line}`);
				result.notes.push(line);
				result.volume = { heapGrowth: figures.heapGrowth, boundMs };
				results.push(result);
			}
		} finally {
			await sandbox.stop();
		}
		return results;
	},
	targets(results): Target[] {
		return results.map((r) => {
			const run = r.runs[0];
			const v = r.volume!;
			const heapMb = v.heapGrowth / MB;
			const limitMb = HEAP_TARGET_MB[run.expected] ?? 100;
			const bound = v.boundMs;
			return {
				scenario: r.id,
				target: `complete, 0 429s, heap growth at most ${limitMb} MB, wall at most 1.25 x max(floor, n8n's HTTP alone) + n8n's no-op`,
				met:
					run.complete &&
					run.rateLimited === 0 &&
					heapMb <= limitMb &&
					(run.wallMs ?? Infinity) <= bound,
				detail: `${run.rateLimited} 429s, ${heapMb.toFixed(0)} MB, wall ${((run.wallMs ?? 0) / 1000).toFixed(1)} s of ${(bound / 1000).toFixed(1)} s`,
			};
		});
	},
};
