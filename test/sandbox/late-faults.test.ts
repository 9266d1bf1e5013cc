/** Answers a careful client must survive: a 429 after the create ran, {success: true} without data, no success. */
import { EMPTY, useSandbox } from './helpers';

const t = useSandbox();

describe('429 after the operation ran', () => {
	it('queued with after: true, the lead is created and the client sees a 429 with rate-limit headers', async () => {
		await t.control.addFault({
			method: 'POST',
			path: '/api/v1/leads',
			status: 429,
			after: true,
			retryAfter: 2,
		});
		const res = await t.api.post('/leads', { first_name: 'Ran anyway' });
		expect(res.status).toBe(429);
		expect(res.body.error.code).toBe('rate_limited');
		expect(res.headers['retry-after']).toBe('2');
		expect(res.headers['x-ratelimit-remaining']).toBe('0');
		expect(res.headers['x-ratelimit-reset']).toMatch(/^\d+$/);
		expect([...t.sandbox.store.leads.values()].map((l) => l.first_name)).toEqual(['Ran anyway']);
		expect(await t.control.stats()).toMatchObject({
			rateLimited: 1,
			rateLimitedAfterRun: 1,
			creates: { lead: 1 },
		});
	});

	it('after429Rate 1: every request runs and is answered 429, seeded', async () => {
		await t.control.config({ after429Rate: 1 });
		for (let i = 0; i < 3; i++)
			expect((await t.api.post('/leads', { first_name: `L${i}` })).status).toBe(429);
		expect(t.sandbox.store.leads.size).toBe(3);
		const log = await t.control.requests();
		expect(log.map((e) => e.fault)).toEqual([
			'random:after:status:429',
			'random:after:status:429',
			'random:after:status:429',
		]);
		expect((await t.control.stats()).rateLimitedAfterRun).toBe(3);
	});

	it('after429Rate 0.3 mixes with successes, the same way for the same seed', async () => {
		const run = async () => {
			t.sandbox.reset(EMPTY);
			await t.control.config({ after429Rate: 0.3, faultSeed: 11 });
			const seen: number[] = [];
			for (let i = 0; i < 30; i++)
				seen.push((await t.api.post('/leads', { first_name: `L${i}` })).status);
			expect(t.sandbox.store.leads.size).toBe(30);
			return seen;
		};
		const first = await run();
		expect(await run()).toEqual(first);
		expect(first.filter((s) => s === 429).length).toBeGreaterThan(0);
		expect(first.filter((s) => s === 201).length).toBeGreaterThan(0);
	});
});

describe('success without data, data without success', () => {
	it('no-data: the operation runs, the answer is {success: true} (with meta on lists)', async () => {
		await t.control.addFault({ method: 'POST', path: '/api/v1/leads', kind: 'no-data' });
		const res = await t.api.post('/leads', { first_name: 'Ada' });
		expect(res.status).toBe(201);
		expect(res.body).toEqual({ success: true });
		expect(t.sandbox.store.leads.size).toBe(1);
		await t.control.addFault({ method: 'GET', path: '/api/v1/leads', kind: 'no-data' });
		expect((await t.api.get('/leads')).body).toEqual({
			success: true,
			meta: { page: 1, per_page: 20, total: 1 },
		});
		expect(res.headers['x-ratelimit-remaining']).toBeDefined();
	});

	it('no-success: the answer has data (and meta) but no success field', async () => {
		const lead = (await t.api.post('/leads', { first_name: 'Ada' })).body.data;
		await t.control.addFault({ path: '/api/v1/leads/*', kind: 'no-success' });
		expect((await t.api.get(`/leads/${lead.id}`)).body).toEqual({ data: lead });
		await t.control.addFault({ path: '/api/v1/leads', kind: 'no-success' });
		expect((await t.api.get('/leads')).body).toEqual({
			data: [lead],
			meta: { page: 1, per_page: 20, total: 1 },
		});
	});

	it('leaves an error answer as it was', async () => {
		await t.control.addFault({ path: '/api/v1/leads/*', kind: 'no-data' });
		const res = await t.api.get('/leads/ld_missing');
		expect(res.status).toBe(404);
		expect(res.body.success).toBe(false);
	});
});

describe('counters for chaos runs', () => {
	it('counts requests per route and method', async () => {
		const lead = (await t.api.post('/leads', { first_name: 'Ada' })).body.data;
		await t.api.get(`/leads/${lead.id}`);
		await t.api.get('/leads/ld_other');
		await t.api.patch(`/leads/${lead.id}`, { title: 'CTO' });
		await t.api.get('/nowhere');
		expect((await t.control.stats()).byEndpoint).toEqual({
			'POST /api/v1/leads': 1,
			'GET /api/v1/leads/:id': 2,
			'PATCH /api/v1/leads/:id': 1,
			'GET (no route)': 1,
		});
	});

	it('counts duplicate creates: the same body by the same key, key order aside', async () => {
		const lead = (await t.api.post('/leads', { first_name: 'Ada', company: 'X' })).body.data;
		await t.api.post('/leads', { company: 'X', first_name: 'Ada' }); // duplicate
		await t.api.post('/leads', { first_name: 'Ada', company: 'Y' });
		await t.api.post('/messages', { lead_id: lead.id, body: 'Hi' });
		await t.api.post('/messages', { lead_id: lead.id, body: 'Hi' }); // duplicate
		await t.api.post('/leads', {}); // 422: not a create
		await t.api.post('/leads', {});
		const stats = await t.control.stats();
		expect(stats.duplicateCreates).toBe(2);
		expect(stats.creates).toEqual({ lead: 3, campaign: 0, message: 2 });
		t.sandbox.reset(EMPTY);
		await t.api.post('/leads', { first_name: 'Ada', company: 'X' });
		expect((await t.control.stats()).duplicateCreates).toBe(0);
	});

	it('a retried create after a late 429 shows up as a duplicate', async () => {
		await t.control.addFault({
			method: 'POST',
			path: '/api/v1/messages',
			status: 429,
			after: true,
		});
		const lead = t.sandbox.store.addLead({ first_name: 'Ada' });
		expect((await t.api.post('/messages', { lead_id: lead.id, body: 'Hello' })).status).toBe(429);
		expect((await t.api.post('/messages', { lead_id: lead.id, body: 'Hello' })).status).toBe(201); // a naive retry
		expect(await t.control.stats()).toMatchObject({
			duplicateCreates: 1,
			rateLimitedAfterRun: 1,
			creates: { message: 2 },
		});
	});
});
