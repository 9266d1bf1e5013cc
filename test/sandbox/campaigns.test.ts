/** /api/v1/campaigns over real HTTP: creation with steps, the state machine, analytics. */
import { ISO, useSandbox } from './helpers';

const t = useSandbox();

const STEPS = [
	{ type: 'connection_request', note: 'Hi {{firstName}}, let us connect!' },
	{ type: 'message', delay_days: 2, body: 'Thanks for connecting, {{firstName}}.' },
	{ type: 'message', delay_days: 0, body: 'One more thing.' },
];
const VALID = {
	name: 'Founders Q4',
	type: 'connection_message',
	lead_list_id: 'll_founders',
	steps: STEPS,
};

const createCampaign = async (body: Record<string, unknown> = VALID) => {
	const res = await t.api.post('/campaigns', body);
	expect(res.status).toBe(201);
	return res.body.data;
};

describe('POST /campaigns', () => {
	it('creates a draft and stores notes literally', async () => {
		const campaign = await createCampaign();
		expect(campaign).toEqual({
			id: expect.stringMatching(/^cmp_[0-9a-z]+$/),
			name: 'Founders Q4',
			type: 'connection_message',
			lead_list_id: 'll_founders',
			steps: STEPS,
			status: 'draft',
			created_at: expect.stringMatching(ISO),
			updated_at: campaign.created_at,
			started_at: null,
			paused_at: null,
		});
		expect(campaign.steps[0].note).toBe('Hi {{firstName}}, let us connect!');
		expect((await t.api.get(`/campaigns/${campaign.id}`)).body.data).toEqual(campaign);
		expect((await t.control.stats()).creates.campaign).toBe(1);
	});

	it('accepts a custom campaign type and custom steps with their own fields (raw JSON steps)', async () => {
		const steps = [
			{ type: 'inmail', subject: 'Hello', body: 'Hi', options: { tracked: true } },
			{ type: 'connection_request' },
		];
		const campaign = await createCampaign({ name: 'Custom', type: 'sales_nav_inmail', steps });
		expect(campaign.type).toBe('sales_nav_inmail');
		expect(campaign.steps).toEqual(steps);
		expect(campaign.lead_list_id).toBeNull();
	});

	const withStep = (step: unknown) => ({ ...VALID, steps: [STEPS[0], step] });
	it.each([
		['no name', { ...VALID, name: undefined }, 'name', 'is required'],
		['an empty name', { ...VALID, name: '' }, 'name', 'must not be empty'],
		['no type', { ...VALID, type: undefined }, 'type', 'is required'],
		[
			'a type that is not snake_case',
			{ ...VALID, type: 'Connection Message' },
			'type',
			'must be lowercase snake_case, e.g. connection_message',
		],
		['no steps', { ...VALID, steps: undefined }, 'steps', 'is required'],
		['empty steps', { ...VALID, steps: [] }, 'steps', 'must have at least one step'],
		['steps that are not an array', { ...VALID, steps: {} }, 'steps', 'must be an array'],
		['a numeric lead_list_id', { ...VALID, lead_list_id: 3 }, 'lead_list_id', 'must be a string'],
		['an unknown field', { ...VALID, schedule: 'daily' }, 'schedule', 'unknown field'],
		['a step that is not an object', withStep('message'), 'steps[1]', 'must be an object'],
		['a step without type', withStep({ body: 'x' }), 'steps[1].type', 'is required'],
		[
			'a step type that is not snake_case',
			withStep({ type: 'Follow-Up' }),
			'steps[1].type',
			'must be lowercase snake_case, e.g. connection_message',
		],
		[
			'a message step without delay_days',
			withStep({ type: 'message', body: 'x' }),
			'steps[1].delay_days',
			'is required',
		],
		[
			'a negative delay_days',
			withStep({ type: 'message', delay_days: -1, body: 'x' }),
			'steps[1].delay_days',
			'must be a non-negative integer',
		],
		[
			'a fractional delay_days',
			withStep({ type: 'message', delay_days: 1.5, body: 'x' }),
			'steps[1].delay_days',
			'must be a non-negative integer',
		],
		[
			'delay_days as a string',
			withStep({ type: 'message', delay_days: '2', body: 'x' }),
			'steps[1].delay_days',
			'must be a non-negative integer',
		],
		[
			'a message step without body',
			withStep({ type: 'message', delay_days: 1 }),
			'steps[1].body',
			'is required',
		],
		[
			'a message step with an empty body',
			withStep({ type: 'message', delay_days: 1, body: '' }),
			'steps[1].body',
			'must not be empty',
		],
		[
			'an unknown field on a message step',
			withStep({ type: 'message', delay_days: 1, body: 'x', note: 'n' }),
			'steps[1].note',
			'unknown field',
		],
		[
			'an unknown field on a connection request',
			withStep({ type: 'connection_request', delay_days: 1 }),
			'steps[1].delay_days',
			'unknown field',
		],
		[
			'a note over 300 characters',
			withStep({ type: 'connection_request', note: 'x'.repeat(301) }),
			'steps[1].note',
			'must be at most 300 characters',
		],
	])('rejects %s with 422', async (_name, body, field, message) => {
		const res = await t.api.post('/campaigns', body);
		expect(res.status).toBe(422);
		expect(res.body.error.code).toBe('validation_error');
		expect(res.body.error.details).toEqual([{ field, message }]);
		expect(t.sandbox.store.campaigns.size).toBe(0);
	});

	it('accepts a note of exactly 300 characters', async () => {
		await createCampaign({
			...VALID,
			steps: [{ type: 'connection_request', note: 'x'.repeat(300) }],
		});
	});
});

describe('GET /campaigns', () => {
	it('lists with paging and filters by status', async () => {
		const [a, b, c] = [await createCampaign(), await createCampaign(), await createCampaign()];
		await t.api.post(`/campaigns/${a.id}/start`);
		await t.api.post(`/campaigns/${b.id}/start`);
		await t.api.post(`/campaigns/${b.id}/pause`);
		const ids = async (query: Record<string, string>) =>
			(await t.api.get('/campaigns', query)).body.data.map((x: { id: string }) => x.id);
		expect(await ids({})).toEqual([c.id, b.id, a.id]);
		expect(await ids({ status: 'active' })).toEqual([a.id]);
		expect(await ids({ status: 'paused' })).toEqual([b.id]);
		expect(await ids({ status: 'draft' })).toEqual([c.id]);
		expect((await t.api.get('/campaigns', { per_page: '2', page: '2' })).body).toMatchObject({
			data: [{ id: a.id }],
			meta: { page: 2, per_page: 2, total: 3 },
		});
	});

	it('answers 404 for an unknown campaign', async () => {
		const res = await t.api.get('/campaigns/cmp_nope');
		expect(res.status).toBe(404);
		expect(res.body.error).toEqual({ code: 'not_found', message: 'Campaign cmp_nope not found' });
	});
});

describe('start and pause', () => {
	it('moves draft -> active -> paused -> active, refusing moves to the same state', async () => {
		const { id } = await createCampaign();
		const conflict = async (action: string, message: string) => {
			const res = await t.api.post(`/campaigns/${id}/${action}`);
			expect(res.status).toBe(409);
			expect(res.body.error).toEqual({ code: 'conflict', message });
		};
		await conflict('pause', `Campaign ${id} is not active (it is a draft)`);

		const started = await t.api.post(`/campaigns/${id}/start`);
		expect(started.status).toBe(200);
		expect(started.body.data).toMatchObject({
			id,
			status: 'active',
			started_at: expect.stringMatching(ISO),
			paused_at: null,
		});
		await conflict('start', `Campaign ${id} is already active`);

		const paused = await t.api.post(`/campaigns/${id}/pause`, {});
		expect(paused.body.data).toMatchObject({
			status: 'paused',
			paused_at: expect.stringMatching(ISO),
		});
		await conflict('pause', `Campaign ${id} is already paused`);

		const resumed = await t.api.post(`/campaigns/${id}/start`, {});
		expect(resumed.body.data).toMatchObject({
			status: 'active',
			started_at: started.body.data.started_at,
			paused_at: null,
		});
		expect((await t.api.get(`/campaigns/${id}`)).body.data.status).toBe('active');
	});

	it('rejects a body with fields, and answers 404 for an unknown campaign', async () => {
		const { id } = await createCampaign();
		const res = await t.api.post(`/campaigns/${id}/start`, { force: true });
		expect(res.status).toBe(422);
		expect(res.body.error.details).toEqual([{ field: 'force', message: 'unknown field' }]);
		expect((await t.api.post('/campaigns/cmp_nope/start')).status).toBe(404);
		expect((await t.api.post('/campaigns/cmp_nope/pause')).status).toBe(404);
	});
});

describe('GET /campaigns/:id/analytics', () => {
	it('computes rates and per-step metrics from leads, messages and replies', async () => {
		const campaign = await createCampaign();
		const lead = async (body: Record<string, unknown>) =>
			(await t.api.post('/leads', body)).body.data.id as string;
		const a = await lead({
			first_name: 'A',
			campaign_id: campaign.id,
			connection_status: 'accepted',
		});
		await lead({ first_name: 'B', campaign_id: campaign.id, connection_status: 'pending' });
		const c = await lead({
			first_name: 'C',
			lead_list_id: 'll_founders',
			connection_status: 'accepted',
		});
		await lead({ first_name: 'D', campaign_id: campaign.id });
		await lead({ first_name: 'E', connection_status: 'accepted' }); // not in the campaign
		const send = (lead_id: string, step_index: number, status: string) =>
			t.control.insertMessages({ count: 1, lead_id, campaign_id: campaign.id, step_index, status });
		await send(a, 1, 'delivered');
		await send(c, 1, 'delivered');
		await send(a, 2, 'read');
		await send(c, 2, 'queued'); // not sent yet
		await t.control.reply({ lead_id: a }); // answers A's latest: step 2

		const res = await t.api.get(`/campaigns/${campaign.id}/analytics`);
		expect(res.status).toBe(200);
		expect(res.body.data).toEqual({
			campaign_id: campaign.id,
			leads_total: 4,
			connection_requests_sent: 3,
			connections_accepted: 2,
			connection_rate: 0.6667,
			messages_sent: 3,
			replies: 1,
			reply_rate: 0.3333,
			steps: [
				{ step_index: 0, type: 'connection_request', sent: 3, replied: 2, reply_rate: 0.6667 },
				{ step_index: 1, type: 'message', sent: 2, replied: 0, reply_rate: 0 },
				{ step_index: 2, type: 'message', sent: 1, replied: 1, reply_rate: 1 },
			],
		});
	});

	it('answers zeros, not NaN, for a campaign with nothing yet', async () => {
		const campaign = await createCampaign();
		const { data } = (await t.api.get(`/campaigns/${campaign.id}/analytics`)).body;
		expect(data).toMatchObject({ leads_total: 0, connection_rate: 0, reply_rate: 0 });
		expect(data.steps.map((s: { reply_rate: number }) => s.reply_rate)).toEqual([0, 0, 0]);
	});

	it('is computed for seeded campaigns too, and 404s for an unknown one', async () => {
		t.sandbox.reset();
		const [active] = t.sandbox.store.findCampaigns('active');
		const { data } = (await t.api.get(`/campaigns/${active.id}/analytics`)).body;
		expect(data.leads_total).toBeGreaterThan(0);
		expect(data.messages_sent).toBeGreaterThan(0);
		expect(data.connection_rate).toBeGreaterThan(0);
		expect(data.connection_rate).toBeLessThanOrEqual(1);
		expect((await t.api.get('/campaigns/cmp_nope/analytics')).status).toBe(404);
	});
});
