/** The fixed-window rate limit and its headers, in each reset format. Counts, not wall-clock, wherever possible. */
import { setTimeout as sleep } from 'node:timers/promises';

import { sandboxApi, type ApiResponse } from './client';
import { useSandbox } from './helpers';

const KEYS = ['rl-key-one-xxxx', 'rl-key-two-yyyy'];
// A long window: the counting tests below must never see it roll over, however slow the machine.
const t = useSandbox({ apiKeys: KEYS, rateLimit: 5, windowMs: 60_000 });

const header = (res: ApiResponse, name: string) => res.headers[name] as string | undefined;
const remaining = (res: ApiResponse) => Number(header(res, 'x-ratelimit-remaining'));

describe('fixed window per key', () => {
	it('counts down, then answers 429 with Retry-After, without running the request', async () => {
		const seen: number[] = [];
		for (let i = 0; i < 5; i++) {
			const res = await t.api.post('/leads', { first_name: `L${i}` });
			expect(res.status).toBe(201);
			expect(header(res, 'x-ratelimit-limit')).toBe('5');
			seen.push(remaining(res));
		}
		expect(seen).toEqual([4, 3, 2, 1, 0]);

		const limited = await t.api.post('/leads', { first_name: 'over' });
		expect(limited.status).toBe(429);
		expect(limited.body.success).toBe(false);
		expect(limited.body.error.code).toBe('rate_limited');
		const retryAfter = header(limited, 'retry-after');
		expect(retryAfter).toMatch(/^\d+$/);
		expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
		expect(Number(retryAfter)).toBeLessThanOrEqual(60);
		expect(limited.body.error.message).toBe(`Rate limit exceeded, retry in ${retryAfter} s`);
		expect(remaining(limited)).toBe(0);

		expect(t.sandbox.store.leads.size).toBe(5);
		const stats = await t.control.stats();
		expect(stats.creates.lead).toBe(5);
		expect(stats.rateLimited).toBe(1);
		expect(stats.byStatus).toEqual({ '201': 5, '429': 1 });
	});

	it('keeps a separate budget per key', async () => {
		for (let i = 0; i < 6; i++) await t.api.get('/leads');
		const other = await sandboxApi(t.sandbox.url, KEYS[1]).get('/leads');
		expect(other.status).toBe(200);
		expect(remaining(other)).toBe(4);
		expect((await t.control.stats()).byKey).toEqual({ key0: 6, key1: 1 });
	});

	it('limits unauthenticated requests too, with headers on the 401s', async () => {
		const anonymous = sandboxApi(t.sandbox.url);
		const statuses: number[] = [];
		for (let i = 0; i < 7; i++) {
			const res = await anonymous.get('/leads');
			statuses.push(res.status);
			expect(header(res, 'x-ratelimit-reset')).toBeDefined();
		}
		expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429]);
		// ...in their own bucket: the valid key is untouched.
		expect(remaining(await t.api.get('/leads'))).toBe(4);
	});

	it('does not limit, count or log the control endpoints', async () => {
		for (let i = 0; i < 6; i++) await t.api.get('/leads');
		for (let i = 0; i < 20; i++) await t.control.health();
		expect((await t.control.stats()).requests).toBe(6);
		expect(await t.control.requests()).toHaveLength(6);
	});

	it('follows rateLimit changes made through config', async () => {
		await t.control.config({ rateLimit: 2 });
		expect((await t.api.get('/leads')).headers['x-ratelimit-limit']).toBe('2');
		await t.api.get('/leads');
		expect((await t.api.get('/leads')).status).toBe(429);
	});
});

describe('window roll-over', () => {
	it('opens a new window once the reset time has passed', async () => {
		await t.control.config({ rateLimit: 1, windowMs: 500, resetFormat: 'epoch-ms' });
		const reset = (res: ApiResponse) => Number(header(res, 'x-ratelimit-reset'));
		const first = await t.api.get('/leads');
		expect(first.status).toBe(200);
		expect(remaining(first)).toBe(0);
		const second = await t.api.get('/leads');
		// On a very slow machine the window may already have rolled over; then it must say so.
		if (second.status === 200) expect(reset(second)).toBeGreaterThan(reset(first));
		else {
			expect(second.status).toBe(429);
			expect(header(second, 'retry-after')).toBe('1'); // sub-second waits round up to 1
		}
		await sleep(Math.max(0, reset(second) - Date.now()) + 20);
		const third = await t.api.get('/leads');
		expect(third.status).toBe(200);
		expect(reset(third)).toBeGreaterThan(reset(second));
	});
});

describe('X-RateLimit-Reset formats', () => {
	/** The reset instant of the current window, in ms, read with epoch-ms first. */
	async function windowReset(): Promise<number> {
		await t.control.config({ resetFormat: 'epoch-ms' });
		const value = header(await t.api.get('/leads'), 'x-ratelimit-reset')!;
		expect(value).toMatch(/^\d{13}$/);
		return Number(value);
	}
	const readWith = async (resetFormat: 'epoch-s' | 'epoch-ms' | 'delta-s' | 'http-date') => {
		await t.control.config({ resetFormat });
		const res = await t.api.get('/leads');
		return { at: Date.now(), value: header(res, 'x-ratelimit-reset')! };
	};

	it('epoch-ms: unix milliseconds of the window end', async () => {
		const before = Date.now();
		const resetAt = await windowReset();
		expect(resetAt).toBeGreaterThan(before + 59_000);
		expect(resetAt).toBeLessThanOrEqual(Date.now() + 60_000);
		expect(Number((await readWith('epoch-ms')).value)).toBe(resetAt);
	});

	it('epoch-s: unix seconds, rounded up', async () => {
		const resetAt = await windowReset();
		const { value } = await readWith('epoch-s');
		expect(value).toMatch(/^\d{10}$/);
		expect(Number(value)).toBe(Math.ceil(resetAt / 1000));
	});

	it('delta-s: whole seconds left, rounded up', async () => {
		const resetAt = await windowReset();
		const before = Date.now();
		const { value, at } = await readWith('delta-s');
		expect(value).toMatch(/^\d+$/);
		expect(Number(value)).toBeGreaterThanOrEqual(Math.ceil((resetAt - at) / 1000));
		expect(Number(value)).toBeLessThanOrEqual(Math.ceil((resetAt - before) / 1000));
	});

	it('http-date: an RFC 7231 date, rounded up to the second', async () => {
		const resetAt = await windowReset();
		const { value } = await readWith('http-date');
		expect(value).toMatch(
			/^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/,
		);
		expect(Date.parse(value)).toBe(Math.ceil(resetAt / 1000) * 1000);
	});

	it.each(['epoch-s', 'epoch-ms', 'delta-s', 'http-date'] as const)(
		'keeps Retry-After in whole seconds on a 429 with %s',
		async (resetFormat) => {
			await t.control.config({ resetFormat });
			let res: ApiResponse;
			do res = await t.api.get('/leads');
			while (res.status === 200);
			expect(res.status).toBe(429);
			expect(header(res, 'retry-after')).toMatch(/^[1-9]\d*$/);
			expect(header(res, 'x-ratelimit-reset')).toBeDefined();
		},
	);
});
