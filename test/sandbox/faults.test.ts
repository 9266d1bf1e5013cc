/** Fault injection: targeted one-shot faults and seeded random faults. */
import { sandboxApi } from './client';
import { useSandbox } from './helpers';

const t = useSandbox();

const LIMIT_HEADERS = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'];
const hasLimitHeaders = (headers: Record<string, unknown>) =>
	LIMIT_HEADERS.every((h) => typeof headers[h] === 'string');
/** undici rejects when the server drops the connection. */
const dropped = (promise: Promise<unknown>) =>
	expect(promise).rejects.toThrow(/other side closed|socket|ECONNRESET/i);

describe('targeted faults', () => {
	it.each([
		[500, 'internal_error'],
		[502, 'unavailable'],
		[503, 'unavailable'],
	])('answers %i once, with rate-limit headers, then recovers', async (status, code) => {
		await t.control.addFault({ path: '/api/v1/leads', status });
		const res = await t.api.get('/leads');
		expect(res.status).toBe(status);
		expect(res.body).toMatchObject({ success: false, error: { code } });
		expect(hasLimitHeaders(res.headers)).toBe(true);
		expect((await t.api.get('/leads')).status).toBe(200);
		expect((await t.control.requests()).map((e) => [e.status, e.fault])).toEqual([
			[status, `status:${status}`],
			[200, undefined],
		]);
	});

	it('answers a 429 with honest headers: Retry-After and a reset that far away', async () => {
		await t.control.addFault({ status: 429, retryAfter: 2 });
		const before = Date.now();
		const res = await t.api.get('/leads');
		expect(res.status).toBe(429);
		expect(res.body.error).toEqual({
			code: 'rate_limited',
			message: 'Rate limit exceeded, retry in 2 s',
		});
		expect(res.headers['retry-after']).toBe('2');
		expect(res.headers['x-ratelimit-remaining']).toBe('0');
		expect(Number(res.headers['x-ratelimit-reset'])).toBeGreaterThanOrEqual(
			Math.ceil((before + 2000) / 1000),
		);
		expect((await t.control.stats()).rateLimited).toBe(1);
	});

	it('429-no-headers: a 429 without any rate-limit header', async () => {
		await t.control.addFault({ kind: '429-no-headers' });
		const res = await t.api.get('/leads');
		expect(res.status).toBe(429);
		expect(res.body.error.code).toBe('rate_limited');
		for (const h of [...LIMIT_HEADERS, 'retry-after']) expect(res.headers[h]).toBeUndefined();
		expect((await t.control.stats()).rateLimited).toBe(1);
	});

	it('drop: closes the connection without an answer', async () => {
		await t.control.addFault({ kind: 'drop' });
		await dropped(t.api.get('/leads'));
		expect((await t.api.get('/leads')).status).toBe(200);
		const [entry] = await t.control.requests();
		expect(entry).toMatchObject({ status: 0, fault: 'drop' });
		expect((await t.control.stats()).byStatus).toEqual({ '0': 1, '200': 1 });
	});

	it('malformed: 200 with a JSON content type and a body that is not JSON', async () => {
		await t.control.addFault({ kind: 'malformed' });
		const res = await t.api.get('/leads');
		expect(res.status).toBe(200);
		expect(res.headers['content-type']).toMatch(/application\/json/);
		expect(res.text.length).toBeGreaterThan(0);
		expect(() => JSON.parse(res.text)).toThrow();
	});

	it('false-success: 200 carrying success: false', async () => {
		await t.control.addFault({ kind: 'false-success' });
		const res = await t.api.get('/leads');
		expect(res.status).toBe(200);
		expect(res.body).toEqual({
			success: false,
			error: { code: 'internal_error', message: 'The operation could not be completed' },
		});
	});

	it('matches method, exact path, path prefix and query, and is used up in order', async () => {
		await t.control.addFault({ method: 'post', path: '/api/v1/leads', status: 500 });
		await t.control.addFault({ path: '/api/v1/messages*', status: 502 });
		await t.control.addFault({
			path: '/api/v1/campaigns',
			query: { page: '2' },
			status: 503,
			times: 2,
		});
		await t.control.addFault({ path: '/api/v1/campaigns', status: 500 });

		expect((await t.api.get('/leads')).status).toBe(200); // method differs
		expect((await t.api.get('/leads/ld_x')).status).toBe(404); // exact path differs
		expect((await t.api.post('/leads', { first_name: 'A' })).status).toBe(500);
		expect((await t.api.get('/messages/msg_x')).status).toBe(502); // prefix
		expect((await t.api.get('/messages')).status).toBe(200); // used up
		expect((await t.api.get('/campaigns', { page: 2 })).status).toBe(503);
		expect((await t.api.get('/campaigns', { page: 1 })).status).toBe(500); // the query fault does not match
		expect((await t.api.get('/campaigns', { page: 2 })).status).toBe(503);
		expect((await t.api.get('/campaigns', { page: 2 })).status).toBe(200);
		expect(await t.control.faults()).toEqual([]);
	});

	it('without after, the operation does not run; with after, it runs once and its answer is lost', async () => {
		await t.control.addFault({ method: 'POST', path: '/api/v1/leads', status: 503 });
		expect((await t.api.post('/leads', { first_name: 'Lost request' })).status).toBe(503);
		expect(t.sandbox.store.leads.size).toBe(0);

		await t.control.addFault({ method: 'POST', path: '/api/v1/leads', status: 502, after: true });
		expect((await t.api.post('/leads', { first_name: 'Lost answer' })).status).toBe(502);
		await t.control.addFault({
			method: 'POST',
			path: '/api/v1/messages',
			kind: 'drop',
			after: true,
		});
		const [lead] = t.sandbox.store.leads.values();
		await dropped(t.api.post('/messages', { lead_id: lead.id, body: 'Hi' }));

		expect([...t.sandbox.store.leads.values()].map((l) => l.first_name)).toEqual(['Lost answer']);
		expect(t.sandbox.store.findMessages({})).toHaveLength(1);
		expect((await t.control.stats()).creates).toEqual({ lead: 1, campaign: 0, message: 1 });
	});

	it('skip lets that many matching requests through first: skip 2 hits the third create only', async () => {
		await t.control.addFault({
			method: 'POST',
			path: '/api/v1/leads',
			status: 500,
			after: true,
			skip: 2,
		});
		const statuses: number[] = [];
		for (const name of ['One', 'Two', 'Three', 'Four'])
			statuses.push((await t.api.post('/leads', { first_name: name })).status);
		// Reads do not match the fault and do not use up its skip.
		expect((await t.api.get('/leads')).status).toBe(200);
		expect(statuses).toEqual([201, 201, 500, 201]);
		// The third ran (after: true): stored, its answer lost.
		expect(t.sandbox.store.leads.size).toBe(4);
		expect(await t.control.faults()).toEqual([]);
	});

	it('lists pending faults, clears them, and rejects malformed fault specs', async () => {
		const queued = await t.control.addFault({ path: '/api/v1/leads*', status: 500, times: 3 });
		expect(queued).toMatchObject({
			id: expect.any(Number),
			path: '/api/v1/leads*',
			status: 500,
			remaining: 3,
			after: false,
		});
		expect(await t.control.faults()).toHaveLength(1);
		await t.control.clearFaults();
		expect(await t.control.faults()).toEqual([]);
		expect((await t.api.get('/leads')).status).toBe(200);

		await expect(t.control.addFault({ status: 500, kind: 'drop' })).rejects.toThrow(
			/exactly one of status or kind/,
		);
		await expect(t.control.addFault({} as never)).rejects.toThrow(/422/);
		await expect(t.control.addFault({ status: 200 })).rejects.toThrow(
			/must be an HTTP error status/,
		);
		await expect(t.control.addFault({ kind: 'explode' as never })).rejects.toThrow(/kind/);
	});

	it('comes after authentication and the rate limit', async () => {
		await t.control.addFault({ status: 500 });
		expect((await sandboxApi(t.sandbox.url, 'wrong-key').get('/leads')).status).toBe(401);
		expect((await t.api.get('/leads')).status).toBe(500);
	});
});

describe('random faults', () => {
	const statuses = async (n: number) => {
		const seen: number[] = [];
		for (let i = 0; i < n; i++) seen.push((await t.api.get('/leads')).status);
		return seen;
	};

	it('errorRate 1: every request gets a 5xx, and nothing is created', async () => {
		await t.control.config({ errorRate: 1 });
		const seen = await statuses(30);
		expect(seen.every((s) => [500, 502, 503].includes(s))).toBe(true);
		expect((await t.api.post('/leads', { first_name: 'A' })).status).toBeGreaterThanOrEqual(500);
		expect(t.sandbox.store.leads.size).toBe(0);
		expect((await t.control.requests()).every((e) => e.fault?.startsWith('random:status:5'))).toBe(
			true,
		);
		expect((await t.control.stats()).faultsInjected).toBe(31);
	});

	it('burst429Rate 1: 429s without rate-limit headers', async () => {
		await t.control.config({ burst429Rate: 1 });
		const res = await t.api.get('/leads');
		expect(res.status).toBe(429);
		expect(res.headers['x-ratelimit-remaining']).toBeUndefined();
		expect(res.headers['retry-after']).toBeUndefined();
	});

	it('dropRate 1: connections dropped', async () => {
		await t.control.config({ dropRate: 1 });
		await dropped(t.api.get('/leads'));
		await dropped(t.api.get('/campaigns'));
		expect((await t.control.stats()).byStatus).toEqual({ '0': 2 });
	});

	it('malformedRate 1 and falseSuccessRate 1', async () => {
		await t.control.config({ malformedRate: 1 });
		const malformed = await t.api.get('/leads');
		expect(malformed.status).toBe(200);
		expect(malformed.body).toBeUndefined();
		await t.control.config({ malformedRate: 0, falseSuccessRate: 1 });
		const falseSuccess = await t.api.get('/leads');
		expect(falseSuccess.status).toBe(200);
		expect(falseSuccess.body.success).toBe(false);
	});

	it('repeats exactly for a given fault seed, and differs for another', async () => {
		const run = async (faultSeed: number) => {
			t.sandbox.reset();
			await t.control.config({ errorRate: 0.2, dropRate: 0.1, malformedRate: 0.1, faultSeed });
			const seen: (number | string)[] = [];
			for (let i = 0; i < 40; i++) {
				seen.push(
					await t.api.get('/leads').then(
						(r) => r.status,
						() => 'drop',
					),
				);
			}
			return seen;
		};
		const first = await run(123);
		expect(await run(123)).toEqual(first);
		expect(await run(456)).not.toEqual(first);
		const faults = first.filter((s) => s !== 200).length;
		expect(faults).toBeGreaterThan(0);
		expect(faults).toBeLessThan(40);
	});

	it('leaves the control endpoints alone', async () => {
		await t.control.config({ errorRate: 1, dropRate: 0 });
		await expect(t.control.health()).resolves.toEqual({ ok: true });
		expect(await t.control.stats()).toMatchObject({ requests: 0 });
	});
});

describe('latency', () => {
	it('delays every API request, which overlap while they wait', async () => {
		await t.control.config({ latencyMs: 150 });
		const started = Date.now();
		const results = await Promise.all([1, 2, 3, 4].map(() => t.api.get('/leads')));
		expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200]);
		expect(Date.now() - started).toBeGreaterThanOrEqual(140);
		const stats = await t.control.stats();
		expect(stats.maxConcurrent).toBeGreaterThanOrEqual(2);
		expect(stats.inFlight).toBe(0);
	});

	it('with jitter, requests sent in order are counted in another order', async () => {
		await t.control.config({ latencyJitterMs: 200, rateLimit: 100, windowMs: 60_000 });
		// One after another onto the wire, all in flight together.
		const answers = [];
		for (let i = 0; i < 20; i++) answers.push(t.api.get('/leads'));
		const counted = (await Promise.all(answers)).map((res) =>
			Number(res.headers['x-ratelimit-remaining']),
		);
		expect([...counted].sort((a, b) => b - a)).toEqual(
			Array.from({ length: 20 }, (_, i) => 99 - i),
		);
		expect(counted).not.toEqual([...counted].sort((a, b) => b - a));
	});
});
