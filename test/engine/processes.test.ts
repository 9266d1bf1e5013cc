import { startSandbox, type Sandbox } from '../sandbox/server';
import { startProcesses, type ProcessPool } from './processes';

// The pool the multi-process pacing tests and the bench use: a worker that dies must fail the run
// that waits on it with the worker's own error, not leave it hanging until jest's timeout.
describe('a process pool', () => {
	let sandbox: Sandbox;
	let pool: ProcessPool;
	beforeAll(async () => {
		sandbox = await startSandbox({
			apiKeys: ['pool-secret-key-3f9a'],
			seed: { leads: 0, campaigns: 0, messages: 0 },
		});
		pool = await startProcesses(2, sandbox.url);
	});
	afterAll(async () => {
		await pool?.stop();
		await sandbox?.stop();
	});

	it('runs one job per worker and returns what each created', async () => {
		const apiKey = 'pool-secret-key-3f9a';
		const results = await pool.run([
			{ apiKey, names: ['Ada', 'Alan'] },
			{ apiKey, names: ['Grace'] },
		]);
		expect(results.map((r) => [r.created, r.failed])).toEqual([
			[2, []],
			[1, []],
		]);
		expect(sandbox.stats().creates.lead).toBe(3);
	});

	it("fails a run with the crashed worker's own error, and every later run on it, at once", async () => {
		const apiKey = 'pool-secret-key-3f9a';
		const crash = { apiKey, names: ['Bob'], crashWith: 'deliberate crash in the worker' };
		await expect(pool.run([crash])).rejects.toThrow(
			/^worker 0 crashed: Error: deliberate crash in the worker\n\s+at /,
		);
		await expect(pool.run([{ apiKey, names: ['Ken'] }])).rejects.toThrow(
			/^worker 0 crashed: Error: deliberate crash in the worker/,
		);
		// Nothing was sent for the crashed jobs.
		expect(sandbox.stats().creates.lead).toBe(3);
	}, 30_000);
});
