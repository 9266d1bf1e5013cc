/**
 * Cooperative pacing across real processes: 2, 3 and 4 separate Node processes, each running the action
 * node in n8n's engine (test/engine/process-worker.ts), create leads on one API key against the sandbox,
 * started together or staggered, with each reset format. They share nothing but the sandbox's answers.
 * Counts only: failures, leads created twice, 429s; the wall time is compared with the floor as a ratio
 * with generous room, since the pacing waits for real resets.
 */
import { startProcesses, runShared, type ProcessPool } from '../../../../engine/processes';
import { startSandbox, type Sandbox } from '../../../../sandbox/server';

const KEY = 'processes-secret-key-7c1e';
const LIMIT = 100;

describe('several processes on one API key', () => {
	let sandbox: Sandbox;
	const pools = new Map<number, ProcessPool>();
	const pool = async (size: number) => {
		if (!pools.has(size))
			pools.set(size, await startProcesses(size, { baseUrl: sandbox.url, apiKey: KEY }));
		return pools.get(size)!;
	};

	beforeAll(async () => {
		sandbox = await startSandbox({ apiKeys: [KEY], seed: { leads: 0, campaigns: 0, messages: 0 } });
	});
	afterAll(async () => {
		await Promise.all([...pools.values()].map((p) => p.stop()));
		await sandbox.stop();
	});

	const cases: Array<{
		processes: number;
		format: 'epoch-ms' | 'epoch-s' | 'delta-s' | 'http-date';
		staggerMs: number;
		windowMs: number;
	}> = [
		{ processes: 3, format: 'epoch-ms', staggerMs: 0, windowMs: 1000 },
		{ processes: 3, format: 'epoch-ms', staggerMs: 400, windowMs: 1000 },
		{ processes: 2, format: 'epoch-ms', staggerMs: 0, windowMs: 1000 },
		{ processes: 4, format: 'epoch-ms', staggerMs: 0, windowMs: 1000 },
		{ processes: 4, format: 'epoch-ms', staggerMs: 300, windowMs: 1000 },
		// Whole-second resets: windows of 5 s, so a second of rounding stays a fraction of one.
		{ processes: 3, format: 'epoch-s', staggerMs: 0, windowMs: 5000 },
		{ processes: 3, format: 'http-date', staggerMs: 1500, windowMs: 5000 },
		{ processes: 3, format: 'delta-s', staggerMs: 0, windowMs: 5000 },
	];

	it.each(cases)(
		'$processes processes, $format resets, staggered by $staggerMs ms: 0 failed, 0 created twice, few 429s',
		async ({ processes, format, staggerMs, windowMs }) => {
			const perProcess = Math.round((LIMIT * 4) / processes);
			sandbox.reset({ leads: 0, campaigns: 0, messages: 0 });
			sandbox.config({ rateLimit: LIMIT, windowMs, resetFormat: format });
			const figures = await runShared(await pool(processes), sandbox, {
				perProcess,
				staggerMs,
				tag: `${processes}-${format}-${staggerMs}`,
			});
			const share = figures.rateLimited / figures.requests;
			process.stdout.write(
				`[${processes} processes, ${format}, stagger ${staggerMs} ms] ${figures.created} created, ` +
					`${figures.rateLimited} 429s of ${figures.requests} requests (${(100 * share).toFixed(1)}%), ` +
					`wall ${(figures.wallMs / 1000).toFixed(2)} s, floor ${(figures.floorMs / 1000).toFixed(2)} s ` +
					`(${(figures.wallMs / figures.floorMs).toFixed(2)}x)\n`,
			);
			expect(figures.failed).toBe(0);
			expect(figures.duplicates).toBe(0);
			expect(figures.created).toBe(processes * perProcess);
			expect(share).toBeLessThanOrEqual(0.05);
			expect(figures.wallMs / figures.floorMs).toBeLessThanOrEqual(1.25);
		},
		120_000,
	);
});
