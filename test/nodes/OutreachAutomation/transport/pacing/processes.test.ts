/**
 * Cooperative pacing across real processes: 2, 3 and 4 separate Node processes, each running the action
 * node in n8n's engine (test/engine/process-worker.ts), create leads on one API key against the sandbox,
 * started together or staggered, with each reset format. They share nothing but the sandbox's answers.
 * Counts: failures, leads created twice, 429s; the wall time is compared with the floor as a ratio (the
 * pacing waits for real resets, so the ratio, not the time, is what the pacing decides).
 */
import { startProcesses, runShared, type ProcessPool } from '../../../../engine/processes';
import { startSandbox, type Sandbox } from '../../../../sandbox/server';

const LIMIT = 100;

describe('several processes on one API key', () => {
	let sandbox: Sandbox;
	const pools = new Map<number, ProcessPool>();
	const pool = async (size: number) => {
		if (!pools.has(size)) pools.set(size, await startProcesses(size, sandbox.url));
		return pools.get(size)!;
	};

	beforeAll(async () => {
		sandbox = await startSandbox({
			apiKeys: [
				...cases.map((_, i) => `processes-secret-key-${i}-7c1e`),
				'processes-secret-key-many-7c1e',
			],
			seed: { leads: 0, campaigns: 0, messages: 0 },
		});
	});
	afterAll(async () => {
		await Promise.all([...pools.values()].map((p) => p.stop()));
		await sandbox.stop();
	});

	// 100 requests per window as the service allows a minute, compressed: 2 s for exact resets, 5 s for
	// whole-second ones (a second of rounding stays a fraction of a window). 8 and 6 windows of work.
	const cases: Array<{
		processes: number;
		format: 'epoch-ms' | 'epoch-s' | 'delta-s' | 'http-date';
		staggerMs: number;
		windowMs: number;
	}> = [
		{ processes: 2, format: 'epoch-ms', staggerMs: 0, windowMs: 2000 },
		{ processes: 3, format: 'epoch-ms', staggerMs: 0, windowMs: 2000 },
		{ processes: 3, format: 'epoch-ms', staggerMs: 700, windowMs: 2000 },
		{ processes: 4, format: 'epoch-ms', staggerMs: 0, windowMs: 2000 },
		{ processes: 4, format: 'epoch-ms', staggerMs: 500, windowMs: 2000 },
		{ processes: 3, format: 'epoch-s', staggerMs: 0, windowMs: 5000 },
		{ processes: 3, format: 'http-date', staggerMs: 0, windowMs: 5000 },
		{ processes: 3, format: 'http-date', staggerMs: 1500, windowMs: 5000 },
		{ processes: 3, format: 'delta-s', staggerMs: 0, windowMs: 5000 },
	];

	it.each(cases.map((c, i) => ({ ...c, apiKey: `processes-secret-key-${i}-7c1e` })))(
		'$processes processes, $format resets, staggered by $staggerMs ms: 0 failed, 0 created twice, few 429s',
		async ({ processes, format, staggerMs, windowMs, apiKey }) => {
			const windows = windowMs < 5000 ? 8 : 6;
			const perProcess = Math.floor((LIMIT * windows) / processes);
			sandbox.reset({ leads: 0, campaigns: 0, messages: 0 });
			sandbox.config({ rateLimit: LIMIT, windowMs, resetFormat: format });
			const figures = await runShared(await pool(processes), sandbox, {
				perProcess,
				staggerMs,
				apiKey,
				tag: `${processes}-${format}-${staggerMs}`,
			});
			const share = figures.rateLimited / figures.requests;
			process.stdout.write(
				`[${processes} processes, ${format}, stagger ${staggerMs} ms] ${figures.created} created, ` +
					`${figures.rateLimited} 429s of ${figures.requests} requests (${(100 * share).toFixed(1)}%), ` +
					`wall ${(figures.wallMs / 1000).toFixed(2)} s, floor ${(figures.floorMs / 1000).toFixed(2)} s ` +
					`(${(figures.wallMs / figures.floorMs).toFixed(2)}x)\n`,
			);
			if (share > 0.05 || figures.wallMs / figures.floorMs > 1.2)
				process.stdout.write(`  requests by arrival (ms from the first): ${figures.timeline}\n`);
			expect(figures.failed).toBe(0);
			expect(figures.duplicates).toBe(0);
			expect(figures.created).toBe(processes * perProcess);
			// The last few of each shared window may meet a 429 by design. The work fills whole windows
			// exactly, so a single slot left unused costs one more window (0.14-0.2x of the floor by
			// itself). Runs have measured 0.2-4.6% and 1.04-1.19x with exact resets, 1.12-1.41x with
			// whole-second ones (a clean-clone CI run): the bounds leave room over that (this suite gates
			// releases); the bench prints the tight figures.
			expect(share).toBeLessThanOrEqual(0.08);
			const wholeSeconds = format !== 'epoch-ms';
			expect(figures.wallMs / figures.floorMs).toBeLessThanOrEqual(wholeSeconds ? 1.75 : 1.5);
		},
		180_000,
	);

	it('16 processes on one key, 40 requests a 2-s window (less than 3 each): 0 failed, 0 created twice, at most 8% answered 429 (target 5%)', async () => {
		const apiKey = 'processes-secret-key-many-7c1e';
		const perProcess = 50;
		sandbox.reset({ leads: 0, campaigns: 0, messages: 0 });
		sandbox.config({ rateLimit: 40, windowMs: 2000, resetFormat: 'epoch-ms' });
		const figures = await runShared(await pool(16), sandbox, { perProcess, apiKey, tag: 'many' });
		const share = figures.rateLimited / figures.requests;
		process.stdout.write(
			`[16 processes] ${figures.created} created, ${figures.rateLimited} 429s of ${figures.requests} ` +
				`requests (${(100 * share).toFixed(1)}%), ${(figures.wallMs / figures.floorMs).toFixed(2)}x the floor\n`,
		);
		expect(figures.failed).toBe(0);
		expect(figures.duplicates).toBe(0);
		expect(figures.created).toBe(16 * perProcess);
		// The target is 5% (every run so far: 1.2-4.3%); this suite gates releases, so its bound leaves
		// margin for a busy machine, as the 2-4 process cases do.
		expect(share).toBeLessThanOrEqual(0.08);
	}, 240_000);
});
