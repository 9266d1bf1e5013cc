/** The envelope, authentication, routing, query validation and paging, over real HTTP. */
import { request } from 'undici';

import { sandboxApi } from './client';
import { EMPTY, useSandbox } from './helpers';

const KEYS = ['first-secret-key-aaaa', 'second-secret-key-bbbb'];
const t = useSandbox({ apiKeys: KEYS });

const limitHeaders = (headers: Record<string, unknown>) => [
	headers['x-ratelimit-limit'],
	headers['x-ratelimit-remaining'],
	headers['x-ratelimit-reset'],
];

describe('authentication', () => {
	const unauthorized = {
		success: false,
		error: { code: 'unauthorized', message: 'Missing or invalid API key' },
	};

	it.each([
		['no Authorization header', undefined],
		['a non-Bearer scheme', 'Basic Zm9vOmJhcg=='],
		['Bearer without a token', 'Bearer'],
		['an unknown key', 'Bearer not-a-configured-key'],
	])('answers 401 to %s, with the rate-limit headers', async (_name, authorization) => {
		const anonymous = sandboxApi(t.sandbox.url);
		const res = await anonymous.request('GET', '/leads', {
			headers: authorization ? { authorization } : {},
		});
		expect(res.status).toBe(401);
		expect(res.body).toEqual(unauthorized);
		expect(limitHeaders(res.headers).every((h) => typeof h === 'string')).toBe(true);
	});

	it('accepts every configured key, case-insensitive scheme, and labels them in stats', async () => {
		const second = sandboxApi(t.sandbox.url, KEYS[1]);
		expect((await t.api.get('/leads')).status).toBe(200);
		expect((await second.get('/leads')).status).toBe(200);
		const lower = await t.api.request('GET', '/leads', {
			headers: { authorization: `bearer ${KEYS[0]}` },
		});
		expect(lower.status).toBe(200);
		expect((await t.control.stats()).byKey).toEqual({ key0: 2, key1: 1 });
		expect(t.sandbox.keyLabel(KEYS[1])).toBe('key1');
	});

	it('never echoes a key, valid or not, in answers, the log or the stats', async () => {
		const wrong = 'wrong-secret-token-zzzz';
		const texts = [
			(await t.api.get('/leads', { per_page: 1 })).text,
			(await t.api.request('GET', '/leads', { headers: { authorization: `Bearer ${wrong}` } }))
				.text,
			(await t.api.post('/leads', { first_name: 'A' })).text,
			JSON.stringify(await t.control.requests()),
			JSON.stringify(await t.control.stats()),
			JSON.stringify(await t.control.config()),
		].join('\n');
		for (const secret of [...KEYS, wrong]) expect(texts).not.toContain(secret);
		expect((await t.control.requests()).map((e) => e.key)).toEqual(['key0', 'invalid', 'key0']);
	});
});

describe('envelope and routing', () => {
	it('answers JSON with the success envelope and list meta', async () => {
		const res = await t.api.get('/leads');
		expect(res.status).toBe(200);
		expect(res.headers['content-type']).toMatch(/^application\/json/);
		expect(res.body).toEqual({
			success: true,
			data: [],
			meta: { page: 1, per_page: 20, total: 0 },
		});
	});

	it('answers 404 not_found to unknown routes under /api/v1, with rate-limit headers', async () => {
		const res = await t.api.get('/nope');
		expect(res.status).toBe(404);
		expect(res.body.error).toEqual({
			code: 'not_found',
			message: 'Route GET /api/v1/nope not found',
		});
		expect(res.headers['x-ratelimit-remaining']).toBeDefined();
	});

	it('answers 404 outside /api/v1 without counting it', async () => {
		const res = await request(`${t.sandbox.url}/api/v2/leads`);
		expect(res.statusCode).toBe(404);
		expect(res.headers['x-ratelimit-remaining']).toBeUndefined();
		expect(((await res.body.json()) as any).error.code).toBe('not_found');
		expect((await t.control.stats()).requests).toBe(0);
	});

	it('answers 405 with Allow to a known path with the wrong method', async () => {
		const res = await t.api.request('PUT', '/leads');
		expect(res.status).toBe(405);
		expect(res.headers.allow).toBe('GET, POST');
		expect(res.body.error.code).toBe('method_not_allowed');
	});

	it('answers 400 bad_request to a body that is not JSON', async () => {
		const res = await t.api.request('POST', '/leads', {
			headers: { 'content-type': 'application/json' },
			body: undefined,
		});
		expect(res.status).toBe(422); // no body at all is a validation error...
		const broken = await request(`${t.sandbox.url}/api/v1/leads`, {
			method: 'POST',
			headers: { authorization: `Bearer ${KEYS[0]}`, 'content-type': 'application/json' },
			body: '{"first_name": "A",',
		});
		expect(broken.statusCode).toBe(400); // ...a broken one a bad request
		const body = (await broken.body.json()) as any;
		expect(body.success).toBe(false);
		expect(body.error.code).toBe('bad_request');
		expect(body.error.message).toMatch(/^Invalid JSON body/);
	});

	it('answers 415 to a body that is not declared as JSON', async () => {
		const res = await request(`${t.sandbox.url}/api/v1/leads`, {
			method: 'POST',
			headers: {
				authorization: `Bearer ${KEYS[0]}`,
				'content-type': 'application/x-www-form-urlencoded',
			},
			body: 'first_name=A',
		});
		expect(res.statusCode).toBe(415);
		expect(((await res.body.json()) as any).error.code).toBe('unsupported_media_type');
	});

	it('answers 413 to a body over 1 MB', async () => {
		const res = await t.api.post('/leads', { first_name: 'A', blob: 'x'.repeat(1024 * 1024 + 10) });
		expect(res.status).toBe(413);
		expect(res.body.error.code).toBe('payload_too_large');
		expect(t.sandbox.store.leads.size).toBe(0);
	});
});

describe('query validation', () => {
	it.each([
		['page=abc', { page: 'abc' }, 'page', 'must be an integer >= 1'],
		['page=0', { page: '0' }, 'page', 'must be an integer >= 1'],
		['per_page=0', { per_page: '0' }, 'per_page', 'must be an integer >= 1'],
		['per_page=-5', { per_page: '-5' }, 'per_page', 'must be an integer >= 1'],
		['per_page=2.5', { per_page: '2.5' }, 'per_page', 'must be an integer >= 1'],
		['per_page=', { per_page: '' }, 'per_page', 'must be an integer >= 1'],
		['an unknown parameter', { limit: '10' }, 'limit', 'unknown query parameter'],
	])('answers 400 to %s', async (_name, query, field, message) => {
		const res = await t.api.get('/leads', query);
		expect(res.status).toBe(400);
		expect(res.body.error.code).toBe('bad_request');
		expect(res.body.error.details).toEqual([{ field, message }]);
	});

	it('answers 400 to a repeated parameter', async () => {
		const res = await t.api.get('/leads?page=1&page=2');
		expect(res.status).toBe(400);
		expect(res.body.error.details).toEqual([{ field: 'page', message: 'must be given once' }]);
	});

	it('answers 400 to query parameters on endpoints that take none', async () => {
		const lead = (await t.api.post('/leads', { first_name: 'A' })).body.data;
		const res = await t.api.get(`/leads/${lead.id}`, { page: 1 });
		expect(res.status).toBe(400);
		expect(res.body.error.details).toEqual([{ field: 'page', message: 'unknown query parameter' }]);
	});

	it('answers 400 to an unknown campaign status filter', async () => {
		const res = await t.api.get('/campaigns', { status: 'running' });
		expect(res.status).toBe(400);
		expect(res.body.error.details).toEqual([
			{ field: 'status', message: 'must be one of draft, active, paused' },
		]);
	});
});

describe('paging', () => {
	beforeEach(() => t.sandbox.reset({ ...EMPTY, leads: 250 }));

	it('defaults to page 1 of 20', async () => {
		const res = await t.api.get('/leads');
		expect(res.body.meta).toEqual({ page: 1, per_page: 20, total: 250 });
		expect(res.body.data).toHaveLength(20);
	});

	it('clamps per_page to the maximum and reports the size used', async () => {
		const res = await t.api.get('/leads', { per_page: 500 });
		expect(res.body.meta).toEqual({ page: 1, per_page: 100, total: 250 });
		expect(res.body.data).toHaveLength(100);
		t.sandbox.config({ maxPerPage: 7 });
		const small = await t.api.get('/leads', { per_page: 50 });
		expect(small.body.meta.per_page).toBe(7);
		expect(small.body.data).toHaveLength(7);
	});

	it('walks every item exactly once, with a short last page and empty pages past the end', async () => {
		const ids: string[] = [];
		const sizes: number[] = [];
		for (let page = 1; page <= 4; page++) {
			const res = await t.api.get('/leads', { page, per_page: 100 });
			expect(res.body.meta).toEqual({ page, per_page: 100, total: 250 });
			sizes.push(res.body.data.length);
			ids.push(...res.body.data.map((l: { id: string }) => l.id));
		}
		expect(sizes).toEqual([100, 100, 50, 0]);
		expect(new Set(ids).size).toBe(250);
		expect((await t.api.get('/leads', { page: 99999999999 })).body.data).toEqual([]);
	});

	it('lists newest first by default, oldest first when configured', async () => {
		const newest = (await t.api.get('/leads', { per_page: 3 })).body.data.map(
			(l: { id: string }) => l.id,
		);
		expect(newest).toEqual([...newest].sort().reverse());
		t.sandbox.config({ order: 'oldest' });
		const oldest = (await t.api.get('/leads', { per_page: 3 })).body.data.map(
			(l: { id: string }) => l.id,
		);
		expect(oldest).toEqual([...oldest].sort());
		expect(oldest[0] < newest[0]).toBe(true);
	});

	it('in ignore-page mode serves page 1 whatever page is asked, and says page 1', async () => {
		t.sandbox.config({ ignorePage: true });
		const first = await t.api.get('/leads', { page: 1, per_page: 10 });
		const third = await t.api.get('/leads', { page: 3, per_page: 10 });
		expect(third.body.meta).toEqual({ page: 1, per_page: 10, total: 250 });
		expect(third.body.data).toEqual(first.body.data);
	});
});
