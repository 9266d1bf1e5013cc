/**
 * Smoke tests of the pacing across real processes: separate Node processes, each running the action node in
 * n8n's engine (test/engine/process-worker.ts), create leads on one API key against the sandbox and share
 * nothing but its answers. The gates are the goals, asserted as counts: at most 5% of requests answered
 * 429, none failed, none created twice, every lead created; a process alone on exact resets sends in no more
 * rate-limit windows than the work needs (it finishes at the floor); processes sharing a key use at least
 * 85% of the windows they send in. Speed is the bench's to measure.
 *
 * Three or more processes, whole-second resets and their rounding, and services that misbehave are the
 * simulator's: it runs this pacing code on a virtual clock over thousands of seeded scenarios (`npm run
 * simulate`, docs/rate-limits.md "The simulator"). A hung request is volume.test.ts's; whole-second reset
 * formats for one process are variants.test.ts's.
 */
import { startProcesses, runShared, type ProcessPool } from '../../../../engine/processes';
import { startSandbox, type Sandbox } from '../../../../sandbox/server';

/** 100 requests per window as the service allows a minute, compressed to 2 s with exact resets. */
const LIMIT = 100;
const WINDOW_MS = 2000;
/** Eight windows of work: enough for the pacing to learn the limit and settle. */
const TOTAL = 8 * LIMIT;
const MAX_RATE_LIMITED_SHARE = 0.05;
const MIN_SHARED_USE = 0.85;

/** The rate-limit windows the sandbox counted requests in (each run has a key of its own). */
const windowsUsed = (sandbox: Sandbox) =>
	new Set(sandbox.requests().map((entry) => entry.windowEnd)).size;

describe('processes on one API key: smoke tests with the goals as gates', () => {
	let sandbox: Sandbox;
	const pools = new Map<number, ProcessPool>();
	const pool = async (size: number) => {
		if (!pools.has(size)) pools.set(size, await startProcesses(size, sandbox.url));
		return pools.get(size)!;
	};

	beforeAll(async () => {
		sandbox = await startSandbox({
			apiKeys: ['processes-secret-key-alone-7c1e', 'processes-secret-key-shared-7c1e'],
			seed: { leads: 0, campaigns: 0, messages: 0 },
		});
	});
	afterAll(async () => {
		await Promise.all([...pools.values()].map((p) => p.stop()));
		await sandbox.stop();
	});

	/** Runs TOTAL creates split over `processes`; checks and returns the figures every case shares. */
	const run = async (processes: number, apiKey: string) => {
		sandbox.reset({ leads: 0, campaigns: 0, messages: 0 });
		sandbox.config({ rateLimit: LIMIT, windowMs: WINDOW_MS, resetFormat: 'epoch-ms' });
		const perProcess = TOTAL / processes;
		const figures = await runShared(await pool(processes), sandbox, {
			perProcess,
			apiKey,
			tag: `${processes}-processes`,
		});
		const share = figures.rateLimited / figures.requests;
		const windows = windowsUsed(sandbox);
		const needed = Math.ceil(TOTAL / LIMIT);
		process.stdout.write(
			`[${processes} process${processes > 1 ? 'es' : ''}, exact resets] ${figures.created} created, ` +
				`${figures.failed} failed, ${figures.duplicates} created twice, ${figures.rateLimited} 429s of ` +
				`${figures.requests} requests (${(100 * share).toFixed(1)}%), ${windows} windows for the ` +
				`${needed} needed (${((100 * TOTAL) / (windows * LIMIT)).toFixed(0)}% of the limit used); ` +
				`wall ${(figures.wallMs / figures.floorMs).toFixed(2)}x the floor (not asserted)\n`,
		);
		if (share > MAX_RATE_LIMITED_SHARE || windows > needed)
			process.stdout.write(`  requests by arrival (ms from the first): ${figures.timeline}\n`);
		expect(figures.failed).toBe(0);
		expect(figures.duplicates).toBe(0);
		expect(figures.created).toBe(TOTAL);
		expect(share).toBeLessThanOrEqual(MAX_RATE_LIMITED_SHARE);
		return { windows, needed };
	};

	it('one process alone, exact resets: 800 creates in the 8 windows they need, at most 5% answered 429, 0 failed, 0 created twice', async () => {
		const { windows, needed } = await run(1, 'processes-secret-key-alone-7c1e');
		// A window left part unused would push the work into one more: the floor, counted.
		expect(windows).toBe(needed);
	}, 120_000);

	it('two processes sharing one key, started together, exact resets: at most 5% answered 429, 0 failed, 0 created twice, 85% of the limit used', async () => {
		const { windows } = await run(2, 'processes-secret-key-shared-7c1e');
		expect(TOTAL / (windows * LIMIT)).toBeGreaterThanOrEqual(MIN_SHARED_USE);
	}, 120_000);
});
