/** The command line: flag and environment parsing, and one real run of `npm run sandbox`'s command. */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';

import { sandboxApi } from './client';
import { CLI_DEFAULT_PORT, parseCliArgs, usage } from './cli';
import { startSandbox } from './server';

describe('parseCliArgs', () => {
	it('maps every flag to its option', () => {
		const { options, help } = parseCliArgs([
			'--port',
			'4020',
			'--rate-limit',
			'10',
			'--window-ms',
			'1000',
			'--max-per-page',
			'50',
			'--order',
			'oldest',
			'--reset-format',
			'http-date',
			'--api-key',
			'k1',
			'--api-key',
			'k2',
			'--seed',
			'10000',
			'--no-timestamps',
			'--ignore-page',
			'--delete-returns-empty',
			'--latency-ms',
			'25',
			'--error-rate',
			'0.1',
			'--burst-429',
			'0.05',
			'--drop-rate',
			'0.02',
			'--malformed-rate',
			'0.01',
			'--false-success-rate',
			'0.03',
			'--fault-seed',
			'7',
		]);
		expect(help).toBe(false);
		expect(options).toEqual({
			port: 4020,
			rateLimit: 10,
			windowMs: 1000,
			maxPerPage: 50,
			order: 'oldest',
			resetFormat: 'http-date',
			apiKeys: ['k1', 'k2'],
			seed: 10000,
			timestamps: false,
			ignorePage: true,
			deleteReturnsEmpty: true,
			latencyMs: 25,
			errorRate: 0.1,
			burst429Rate: 0.05,
			dropRate: 0.02,
			malformedRate: 0.01,
			falseSuccessRate: 0.03,
			faultSeed: 7,
		});
	});

	it('leaves unset flags to the defaults', () => {
		expect(parseCliArgs([])).toEqual({ help: false, options: {} });
		expect(parseCliArgs(['--help']).help).toBe(true);
	});

	it('reads SANDBOX_* variables, flags winning', () => {
		const env = {
			SANDBOX_PORT: '5000',
			SANDBOX_RATE_LIMIT: '3',
			SANDBOX_API_KEY: 'a, b',
			SANDBOX_NO_TIMESTAMPS: '1',
			SANDBOX_IGNORE_PAGE: 'false',
		};
		expect(parseCliArgs(['--port', '6000'], env).options).toEqual({
			port: 6000,
			rateLimit: 3,
			apiKeys: ['a', 'b'],
			timestamps: false,
			ignorePage: false,
		});
	});

	it.each([
		[['--order', 'sideways'], /--order: must be one of newest, oldest/],
		[['--rate-limit', 'lots'], /--rate-limit: must be a number/],
		[['--rate-limit', '0'], /--rate-limit: must be an integer >= 1/],
		[['--error-rate', '2'], /--error-rate: must be between 0 and 1/],
		[
			['--reset-format', 'unix'],
			/--reset-format: must be one of epoch-s, epoch-ms, delta-s, http-date/,
		],
		[['--verbose'], /Unknown option '--verbose'/],
	])('rejects %j', (argv, message) => {
		expect(() => parseCliArgs(argv)).toThrow(message);
	});

	it('documents every flag with its variable', () => {
		const text = usage();
		for (const flag of [
			'--port',
			'--rate-limit',
			'--window-ms',
			'--max-per-page',
			'--order',
			'--reset-format',
			'--api-key',
			'--seed',
			'--no-timestamps',
			'--latency-ms',
			'--error-rate',
			'--burst-429',
			'--drop-rate',
			'--malformed-rate',
			'--false-success-rate',
			'--ignore-page',
			'--fault-seed',
		]) {
			expect(text).toContain(flag);
		}
		expect(text).toContain('SANDBOX_RATE_LIMIT');
		expect(CLI_DEFAULT_PORT).toBe(4010);
	});
});

describe('the sandbox command', () => {
	const root = path.resolve(__dirname, '../..');
	const run = (args: string[]) =>
		spawn(
			process.execPath,
			[require.resolve('ts-node/dist/bin.js'), '--transpile-only', 'test/sandbox/cli.ts', ...args],
			{
				cwd: root,
				env: { ...process.env, SANDBOX_PORT: '' },
				stdio: ['ignore', 'pipe', 'pipe'],
			},
		);
	const collect = (child: ChildProcess) => {
		const out = { stdout: '', stderr: '' };
		child.stdout!.on('data', (d) => (out.stdout += d));
		child.stderr!.on('data', (d) => (out.stderr += d));
		return out;
	};

	it('starts, prints URL, demo key and curl, answers, and stops on SIGTERM', async () => {
		const child = run(['--port', '0', '--seed', '12', '--rate-limit', '7']);
		const out = collect(child);
		try {
			while (!out.stdout.includes('Stop with Ctrl+C')) {
				await Promise.race([
					once(child.stdout!, 'data'),
					once(child, 'exit').then(() => {
						throw new Error(out.stderr);
					}),
				]);
			}
			const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out.stdout)![1];
			expect(out.stdout).toContain('sandbox-demo-key');
			expect(out.stdout).toContain(
				`curl -s -H "Authorization: Bearer sandbox-demo-key" "${url}/api/v1/leads?per_page=2"`,
			);
			const res = await sandboxApi(url, 'sandbox-demo-key').get('/leads');
			expect(res.status).toBe(200);
			expect(res.body.meta.total).toBe(12);
			expect(res.headers['x-ratelimit-limit']).toBe('7');
		} finally {
			const exited = once(child, 'exit');
			child.kill('SIGTERM');
			const [code] = await exited;
			expect(code).toBe(0);
		}
		expect(out.stdout).toContain('SIGTERM: stopping the sandbox');
	});

	it('does not print keys given with --api-key, and exits 1 on a busy port', async () => {
		const busy = await startSandbox();
		try {
			const child = run(['--port', String(busy.port), '--api-key', 'my-private-key']);
			const out = collect(child);
			const [code] = await once(child, 'exit');
			expect(code).toBe(1);
			expect(out.stderr).toContain(`Port ${busy.port} is in use`);
			expect(out.stdout + out.stderr).not.toContain('my-private-key');
		} finally {
			await busy.stop();
		}
	});
});
