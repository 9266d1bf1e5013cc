/** The /__sandbox control endpoints (through the typed client) and the seed. */
import { request } from 'undici';

import { sandboxApi } from './client';
import { DEFAULT_CONFIG } from './schemas';
import { EMPTY, ISO_SECONDS, useSandbox } from './helpers';
import { Store } from './store';

const t = useSandbox();

describe('reset and seed', () => {
	it('answers health', async () => {
		expect(await t.control.health()).toEqual({ ok: true });
	});

	it('seeds the demo set by default and nothing when asked', async () => {
		expect(await t.control.reset()).toEqual({ leads: 300, campaigns: 6, messages: 600 });
		expect((await t.api.get('/leads')).body.meta.total).toBe(300);
		expect(await t.control.reset(EMPTY)).toEqual({ leads: 0, campaigns: 0, messages: 0 });
		expect((await t.api.get('/leads')).body.meta.total).toBe(0);
		expect(await t.control.reset({ leads: 20 })).toEqual({ leads: 20, campaigns: 6, messages: 40 });
		expect(await t.control.reset({ leads: 5, campaigns: 0, messages: 3 })).toEqual({
			leads: 5,
			campaigns: 0,
			messages: 3,
		});
	});

	it('seeds believable, deterministic data: same seed, same data', () => {
		const snapshot = (seed: number) => {
			const store = new Store();
			store.seed({ leads: 50, seed });
			const strip = <T extends { created_at?: string; updated_at?: string }>({
				created_at,
				updated_at,
				...rest
			}: T) => rest;
			return {
				leads: [...store.leads.values()].map((l) => strip(l)),
				messages: store.findMessages({}).map((m) => strip(m)),
			};
		};
		const a = snapshot(9);
		expect(snapshot(9)).toEqual(a);
		expect(snapshot(10)).not.toEqual(a);
		const lead = a.leads[0];
		expect(lead.first_name).toMatch(/^\p{Lu}/u);
		expect(lead.linkedin_url).toMatch(
			/^https:\/\/www\.linkedin\.com\/in\/[a-z]+-[a-z]+-[0-9a-f]+$/,
		);
		expect(lead.company).toMatch(/^\p{Lu}/u);
		expect(lead.title).toMatch(/^\p{Lu}/u);
	});

	it('seeds campaigns in every state with steps, and leads across them', () => {
		t.sandbox.reset();
		const campaigns = t.sandbox.store.findCampaigns();
		expect(new Set(campaigns.map((c) => c.status))).toEqual(new Set(['draft', 'active', 'paused']));
		expect(campaigns.every((c) => c.steps.length > 0)).toBe(true);
		const leads = [...t.sandbox.store.leads.values()];
		expect(new Set(leads.map((l) => l.connection_status))).toEqual(
			new Set(['none', 'pending', 'accepted']),
		);
		expect(leads.filter((l) => l.campaign_id !== null).length).toBeGreaterThan(100);
		const messages = t.sandbox.store.findMessages({});
		expect(
			messages.every(
				(m) => ISO_SECONDS.test(m.created_at!) && Date.parse(m.created_at!) <= Date.now(),
			),
		).toBe(true);
	});

	// Counts, not a stopwatch: a timing bound here failed on a loaded 2-core machine (1.2 s).
	it('seeds 10,000 leads', () => {
		expect(t.sandbox.reset({ leads: 10_000 })).toEqual({
			leads: 10_000,
			campaigns: 6,
			messages: 20_000,
		});
	});

	it('seed replaces the data but keeps config and log; reset restores the startup config', async () => {
		await t.control.config({ order: 'oldest' });
		await t.api.get('/leads');
		expect(await t.control.seed({ leads: 3, messages: 0 })).toEqual({
			leads: 3,
			campaigns: 6,
			messages: 0,
		});
		expect((await t.control.config()).order).toBe('oldest');
		expect(await t.control.requests()).toHaveLength(1);
		await t.control.reset(EMPTY);
		expect(await t.control.config()).toEqual(DEFAULT_CONFIG);
		expect(await t.control.requests()).toEqual([]);
	});

	it('rejects bad seed specs', async () => {
		await expect(t.control.reset({ leads: -1 })).rejects.toThrow(
			/leads: must be a non-negative integer/,
		);
		await expect(t.control.seed({ lots: 1 } as never)).rejects.toThrow(/lots: unknown field/);
	});
});

describe('config', () => {
	it('reads and changes the live config, validating it', async () => {
		expect(await t.control.config()).toEqual(DEFAULT_CONFIG);
		const changed = await t.control.config({ maxPerPage: 25, resetFormat: 'delta-s' });
		expect(changed).toEqual({ ...DEFAULT_CONFIG, maxPerPage: 25, resetFormat: 'delta-s' });
		expect(t.sandbox.config()).toEqual(changed);
		await expect(t.control.config({ rateLimit: 0 })).rejects.toThrow(
			/rateLimit: must be an integer >= 1/,
		);
		await expect(t.control.config({ order: 'random' as never })).rejects.toThrow(
			/order: must be one of newest, oldest/,
		);
		await expect(t.control.config({ errorRate: 1.5 })).rejects.toThrow(
			/errorRate: must be between 0 and 1/,
		);
		await expect(t.control.config({ apiKeys: ['x'] } as never)).rejects.toThrow(
			/apiKeys: unknown field/,
		);
	});

	it('answers 400 to broken JSON and 404 to unknown control routes', async () => {
		const broken = await request(`${t.sandbox.url}/__sandbox/config`, {
			method: 'POST',
			headers: { 'content-type': 'application/json' },
			body: '{',
		});
		expect(broken.statusCode).toBe(400);
		await broken.body.dump();
		const unknown = await request(`${t.sandbox.url}/__sandbox/nope`);
		expect(unknown.statusCode).toBe(404);
		await unknown.body.dump();
	});
});

describe('request log and stats', () => {
	it('logs each API request with a key label, query, parsed body and status', async () => {
		await t.api.get('/leads', { search: 'ada', per_page: 5 });
		await t.api.post('/leads', { first_name: 'Ada' });
		await sandboxApi(t.sandbox.url).get('/campaigns');
		const log = await t.control.requests();
		expect(log).toEqual([
			{
				seq: 1,
				time: expect.any(Number),
				method: 'GET',
				path: '/api/v1/leads',
				query: { search: 'ada', per_page: '5' },
				key: 'key0',
				status: 200,
				body: null,
				windowEnd: expect.any(Number),
			},
			{
				seq: 2,
				time: expect.any(Number),
				method: 'POST',
				path: '/api/v1/leads',
				query: {},
				key: 'key0',
				status: 201,
				body: { first_name: 'Ada' },
				windowEnd: expect.any(Number),
			},
			{
				seq: 3,
				time: expect.any(Number),
				method: 'GET',
				path: '/api/v1/campaigns',
				query: {},
				key: 'anonymous',
				status: 401,
				body: null,
				windowEnd: expect.any(Number),
			},
		]);
		// Two requests of one key within a window: counted in the same one.
		expect(log[1].windowEnd).toBe(log[0].windowEnd);
		expect((await t.control.requests(2)).map((e) => e.seq)).toEqual([3]);
		expect(t.sandbox.requests(1)).toHaveLength(2);
	});

	it('counts requests by key and status, creates, 429s and concurrency', async () => {
		const lead = (await t.api.post('/leads', { first_name: 'Ada' })).body.data;
		await t.api.post('/campaigns', {
			name: 'C',
			type: 'connection_message',
			steps: [{ type: 'connection_request' }],
		});
		await t.api.post('/messages', { lead_id: lead.id, body: 'Hi' });
		await t.api.post('/leads', {});
		await Promise.all([1, 2, 3].map(() => t.api.get('/leads')));
		expect(await t.control.stats()).toEqual({
			requests: 7,
			byKey: { key0: 7 },
			byStatus: { '201': 3, '422': 1, '200': 3 },
			rateLimited: 0,
			faultsInjected: 0,
			creates: { lead: 1, campaign: 1, message: 1 },
			byEndpoint: {
				'POST /api/v1/leads': 2,
				'POST /api/v1/campaigns': 1,
				'POST /api/v1/messages': 1,
				'GET /api/v1/leads': 3,
			},
			rateLimitedAfterRun: 0,
			duplicateCreates: 0,
			inFlight: 0,
			maxConcurrent: expect.any(Number),
		});
		expect((await t.control.stats()).maxConcurrent).toBeGreaterThanOrEqual(1);
	});
});

describe('reply', () => {
	it('answers the latest outbound message by default, marking it replied', async () => {
		await t.control.reset({ leads: 30, campaigns: 3, messages: 40 });
		const latest = t.sandbox.store.latestOutbound()!;
		const lead = t.sandbox.store.leads.get(latest.lead_id)!;
		const campaignId = lead.campaign_id ?? latest.campaign_id;
		const reply = await t.control.reply({ body: 'Sounds great!' });
		expect(reply).toEqual({
			id: expect.stringMatching(/^msg_/),
			lead_id: lead.id,
			campaign_id: campaignId,
			step_index: latest.campaign_id === campaignId ? latest.step_index : null,
			direction: 'inbound',
			status: 'received',
			body: 'Sounds great!',
			created_at: expect.stringMatching(ISO_SECONDS),
		});
		expect(t.sandbox.store.getMessage(latest.id)!.status).toBe('replied');
		const newest = (await t.api.get('/messages', { per_page: 1 })).body.data[0];
		expect(newest.id).toBe(reply.id);
	});

	it('replies for a given lead, with a default text', async () => {
		const lead = (await t.api.post('/leads', { first_name: 'Ada' })).body.data;
		const sent = (await t.api.post('/messages', { lead_id: lead.id, body: 'Hi' })).body.data;
		const reply = await t.control.reply({ lead_id: lead.id });
		expect(reply).toMatchObject({
			lead_id: lead.id,
			direction: 'inbound',
			status: 'received',
			campaign_id: null,
		});
		expect(reply.body.length).toBeGreaterThan(0);
		expect((await t.api.get(`/messages/${sent.id}`)).body.data.status).toBe('replied');
		expect((await t.api.get('/messages', { status: 'received' })).body.meta.total).toBe(1);
	});

	it('refuses an unknown lead, and a default when nobody was messaged', async () => {
		await expect(t.control.reply({ lead_id: 'ld_nope' })).rejects.toThrow(
			/404: Lead ld_nope not found/,
		);
		await expect(t.control.reply()).rejects.toThrow(/409/);
	});
});

describe('insert messages', () => {
	it('bulk-inserts messages for tests, creating a lead when there is none', async () => {
		const { ids } = await t.control.insertMessages({ count: 3, status: 'delivered' });
		expect(ids).toHaveLength(3);
		expect(t.sandbox.store.leads.size).toBe(1);
		const list = (await t.api.get('/messages')).body.data;
		expect(list.map((m: { status: string }) => m.status)).toEqual([
			'delivered',
			'delivered',
			'delivered',
		]);
	});

	it('takes lead, campaign, direction, status, body and a shared timestamp', async () => {
		const { ids } = await t.control.insertMessages({
			count: 2,
			lead_id: 'ld_anyone',
			campaign_id: 'cmp_x',
			direction: 'inbound',
			body: 'Yes please',
			created_at: '2026-03-04T05:06:07.890Z',
		});
		expect(t.sandbox.store.getMessage(ids[1])).toEqual({
			id: ids[1],
			lead_id: 'ld_anyone',
			campaign_id: 'cmp_x',
			step_index: null,
			direction: 'inbound',
			status: 'received',
			body: 'Yes please',
			created_at: '2026-03-04T05:06:07Z',
		});
		expect(t.sandbox.insertMessages({ count: 1 }).ids).toHaveLength(1);
	});

	it('rejects statuses that do not fit the direction, and bad counts', async () => {
		await expect(
			t.control.insertMessages({ count: 1, direction: 'inbound', status: 'sent' }),
		).rejects.toThrow(/status: must be one of received for inbound messages/);
		await expect(t.control.insertMessages({ count: 0 })).rejects.toThrow(/count/);
		expect(() => t.sandbox.insertMessages({ count: 1, created_at: 'yesterday' })).toThrow(
			/created_at: must be an ISO date/,
		);
	});
});
