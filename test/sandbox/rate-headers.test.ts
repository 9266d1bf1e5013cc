/**
 * Rate-limit variants: no headers, Retry-After styles, a skewed server clock, floor vs ceil rounding, and
 * whether an over-limit request runs before its 429 (a late-counting gateway) or not.
 */
import type { ApiResponse } from './client';
import { useSandbox } from './helpers';

const t = useSandbox({ rateLimit: 3, windowMs: 60_000 });

const LIMIT_HEADERS = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'];
const header = (res: ApiResponse, name: string) => res.headers[name] as string | undefined;
const HTTP_DATE =
	/^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/;

async function untilLimited(): Promise<ApiResponse> {
	for (let i = 0; i < 10; i++) {
		const res = await t.api.get('/leads');
		if (res.status === 429) return res;
	}
	throw new Error('never limited');
}

/** The real reset instant of the current window (epoch ms, no skew). */
async function realReset(): Promise<number> {
	const saved = t.sandbox.config();
	t.sandbox.config({ resetFormat: 'epoch-ms', clockSkewMs: 0 });
	const value = Number(header(await t.api.get('/leads'), 'x-ratelimit-reset'));
	t.sandbox.config({ resetFormat: saved.resetFormat, clockSkewMs: saved.clockSkewMs });
	return value;
}

describe('rateHeaders none', () => {
	it('sends no X-RateLimit-* on any answer, still enforces the limit, 429 keeps Retry-After', async () => {
		await t.control.config({ rateHeaders: 'none' });
		const answers = [
			await t.api.get('/leads'),
			await t.api.get('/leads/ld_x'),
			await t.api.post('/leads', {}),
		];
		expect(answers.map((r) => r.status)).toEqual([200, 404, 422]);
		const limited = await t.api.get('/leads');
		expect(limited.status).toBe(429);
		for (const res of [...answers, limited])
			for (const h of LIMIT_HEADERS) expect(res.headers[h]).toBeUndefined();
		expect(header(limited, 'retry-after')).toMatch(/^[1-9]\d*$/);
	});

	it('strips them from injected 429s and errors as well', async () => {
		await t.control.config({ rateHeaders: 'none' });
		await t.control.addFault({ status: 429, retryAfter: 3 });
		await t.control.addFault({ status: 503 });
		const injected = await t.api.get('/leads');
		expect(injected.status).toBe(429);
		expect(header(injected, 'retry-after')).toBe('3');
		const unavailable = await t.api.get('/leads');
		for (const res of [injected, unavailable])
			for (const h of LIMIT_HEADERS) expect(res.headers[h]).toBeUndefined();
	});
});

describe('retryAfter', () => {
	it('none: a 429 with no Retry-After (but with the X-RateLimit-* headers)', async () => {
		await t.control.config({ retryAfter: 'none' });
		const res = await untilLimited();
		expect(header(res, 'retry-after')).toBeUndefined();
		expect(header(res, 'x-ratelimit-reset')).toBeDefined();
	});

	it('none with rateHeaders none: a bare 429', async () => {
		await t.control.config({ retryAfter: 'none', rateHeaders: 'none' });
		const res = await untilLimited();
		for (const h of [...LIMIT_HEADERS, 'retry-after']) expect(res.headers[h]).toBeUndefined();
	});

	it('http-date: Retry-After as a date at the (rounded up) reset', async () => {
		const resetAt = await realReset();
		await t.control.config({ retryAfter: 'http-date' });
		const res = await untilLimited();
		expect(header(res, 'retry-after')).toMatch(HTTP_DATE);
		expect(Date.parse(header(res, 'retry-after')!)).toBe(Math.ceil(resetAt / 1000) * 1000);
	});
});

describe('resetRounding', () => {
	it('ceil (default) and floor, for epoch-s, http-date and delta-s', async () => {
		const resetAt = await realReset();
		const read = async (
			resetFormat: 'epoch-s' | 'http-date' | 'delta-s',
			resetRounding: 'ceil' | 'floor',
		) => {
			t.sandbox.config({ resetFormat, resetRounding, rateLimit: 100 });
			const before = Date.now();
			const value = header(await t.api.get('/leads'), 'x-ratelimit-reset')!;
			return { value, before, after: Date.now() };
		};
		expect(Number((await read('epoch-s', 'ceil')).value)).toBe(Math.ceil(resetAt / 1000));
		expect(Number((await read('epoch-s', 'floor')).value)).toBe(Math.floor(resetAt / 1000));
		expect(Date.parse((await read('http-date', 'ceil')).value)).toBe(
			Math.ceil(resetAt / 1000) * 1000,
		);
		expect(Date.parse((await read('http-date', 'floor')).value)).toBe(
			Math.floor(resetAt / 1000) * 1000,
		);
		const floor = await read('delta-s', 'floor');
		expect(Number(floor.value)).toBeLessThanOrEqual(Math.floor((resetAt - floor.before) / 1000));
		expect(Number(floor.value)).toBeGreaterThanOrEqual(Math.floor((resetAt - floor.after) / 1000));
	});

	it('floor may announce Retry-After: 0 when less than a second is left', async () => {
		await t.control.config({ rateLimit: 1, windowMs: 400, resetRounding: 'floor' });
		await t.api.get('/leads');
		const res = await t.api.get('/leads');
		if (res.status === 429) {
			expect(header(res, 'retry-after')).toBe('0');
			expect(res.body.error.message).toBe('Rate limit exceeded, retry in 0 s');
		}
	});
});

describe('clockSkewMs', () => {
	it.each([-45_000, 90_000])(
		'%i ms: epoch and date headers and Date read off the skewed clock',
		async (clockSkewMs) => {
			const resetAt = await realReset();
			await t.control.config({ clockSkewMs, resetFormat: 'epoch-ms' });
			const ms = await t.api.get('/leads');
			expect(Number(header(ms, 'x-ratelimit-reset'))).toBe(resetAt + clockSkewMs);
			const date = Date.parse(header(ms, 'date')!);
			expect(Math.abs(date - (Date.now() + clockSkewMs))).toBeLessThan(3000);

			await t.control.config({ resetFormat: 'epoch-s' });
			expect(Number(header(await t.api.get('/leads'), 'x-ratelimit-reset'))).toBe(
				Math.ceil((resetAt + clockSkewMs) / 1000),
			);
			await t.control.config({ resetFormat: 'http-date', retryAfter: 'http-date' });
			const limited = await untilLimited();
			const skewedReset = Math.ceil((resetAt + clockSkewMs) / 1000) * 1000;
			expect(Date.parse(header(limited, 'x-ratelimit-reset')!)).toBe(skewedReset);
			expect(Date.parse(header(limited, 'retry-after')!)).toBe(skewedReset);
		},
	);

	it('leaves relative values alone: delta-s and Retry-After seconds', async () => {
		await t.control.config({ clockSkewMs: -45_000, resetFormat: 'delta-s' });
		const limited = await untilLimited();
		expect(Number(header(limited, 'x-ratelimit-reset'))).toBeGreaterThan(55);
		expect(Number(header(limited, 'retry-after'))).toBeGreaterThan(55);
	});

	it('0 (default): the real Date', async () => {
		const date = Date.parse(header(await t.api.get('/leads'), 'date')!);
		expect(Math.abs(date - Date.now())).toBeLessThan(2000);
	});
});

describe('rateLimitTiming', () => {
	it('before (default): an over-limit create is answered 429 without running', async () => {
		for (let i = 0; i < 3; i++)
			expect((await t.api.post('/leads', { first_name: `L${i}` })).status).toBe(201);
		const limited = await t.api.post('/leads', { first_name: 'over' });
		expect(limited.status).toBe(429);
		expect(t.sandbox.store.leads.size).toBe(3);
		expect((await t.control.stats()).rateLimitedAfterRun).toBe(0);
	});

	it('after: the operation runs, then the answer is a 429 with the usual headers', async () => {
		await t.control.config({ rateLimitTiming: 'after' });
		for (let i = 0; i < 3; i++) await t.api.post('/leads', { first_name: `L${i}` });
		const limited = await t.api.post('/leads', { first_name: 'over' });
		expect(limited.status).toBe(429);
		expect(limited.body.error.code).toBe('rate_limited');
		expect(header(limited, 'retry-after')).toMatch(/^\d+$/);
		expect(header(limited, 'x-ratelimit-remaining')).toBe('0');
		expect([...t.sandbox.store.leads.values()].map((l) => l.first_name)).toEqual([
			'L0',
			'L1',
			'L2',
			'over',
		]);
		const stats = await t.control.stats();
		expect(stats).toMatchObject({ rateLimited: 1, rateLimitedAfterRun: 1, creates: { lead: 4 } });
	});
});
