/**
 * Scenario 10 (`--only processes`): several processes on one API key. 1, 2 and 4 separate Node processes,
 * each running the action node in n8n's engine (test/engine/process-worker.ts, as a queue-mode worker
 * would), create leads on one key against a sandbox of their own, started together; they share nothing but
 * the sandbox's answers. Prints requests, the 429 share and wall time over the floor for each count.
 */
import { runShared, startProcesses } from '../engine/processes';
import { startSandbox } from '../sandbox/server';
import { scenario, type Scenario, type ScenarioResult, type Target } from './figures';
import { log } from './world';

const COUNTS = [1, 2, 4];

export const processes: Scenario = {
	key: 'processes',
	async run(world) {
		const { rateLimit, windowMs } = world.sizes;
		// Eight windows of work whatever the count, so the figures compare.
		const total = rateLimit * 8;
		const keys = COUNTS.map((n) => `bench-processes-${n}-key-5d2a`);
		const sandbox = await startSandbox({
			apiKeys: keys,
			seed: { leads: 0, campaigns: 0, messages: 0 },
			rateLimit,
			windowMs,
			resetFormat: 'epoch-ms',
		});
		const results: ScenarioResult[] = [];
		try {
			for (const [i, count] of COUNTS.entries()) {
				const result = scenario(
					world,
					`10.${count}`,
					'processes',
					`Lead > Create, ${total} items shared by ${count} separate process${count > 1 ? 'es' : ''} on one key`,
					'package',
					`${count} Node process(es) running the action node in n8n's engine, started together, one sandbox`,
					total,
				);
				result.goals = { failuresOnly: true };
				log(`processes: ${count} process(es), ${total} creates`);
				sandbox.reset({ leads: 0, campaigns: 0, messages: 0 });
				const pool = await startProcesses(count, sandbox.url);
				try {
					const f = await runShared(pool, sandbox, {
						perProcess: Math.floor(total / count),
						apiKey: keys[i],
						tag: `bench-${count}`,
					});
					const created = f.created;
					result.runs.push({
						run: 1,
						requests: f.requests,
						rateLimited: f.rateLimited,
						maxConcurrent: sandbox.stats().maxConcurrent,
						failedExecution: false,
						failedItems: f.failed,
						returned: created,
						distinct: created,
						expected: total,
						complete: f.failed === 0 && f.duplicates === 0 && created === total,
						duplicatesCreated: f.duplicates,
						wallMs: f.wallMs,
						spanMs: f.wallMs,
						afterFirstMs: f.wallMs,
					});
					result.notes.push(
						`${count} process(es): ${f.requests} requests, ${f.rateLimited} answered 429 ` +
							`(${((100 * f.rateLimited) / f.requests).toFixed(1)}%), wall ${(f.wallMs / 1000).toFixed(2)} s ` +
							`from the first request, floor ${(f.floorMs / 1000).toFixed(2)} s (${(f.wallMs / f.floorMs).toFixed(2)}x)`,
					);
				} finally {
					await pool.stop();
				}
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
			const share = run ? run.rateLimited / Math.max(1, run.requests) : 1;
			return {
				scenario: r.id,
				target: '0 failed, 0 created twice, at most 5% of requests answered 429',
				met: !!run && run.complete && share <= 0.05,
				detail: run ? `${(100 * share).toFixed(1)}% 429s, ${run.failedItems} failed` : 'no run',
			};
		});
	},
};
