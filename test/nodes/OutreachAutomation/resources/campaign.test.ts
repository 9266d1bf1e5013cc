import { runNode } from '../../../engine/harness';
import { startSandbox, type Sandbox } from '../../../sandbox/server';

const rl = (value: string) => ({ __rl: true, mode: 'id', value });

describe('Campaign', () => {
	let sandbox: Sandbox;
	let creds: { baseUrl: string; apiKey: string };

	beforeAll(async () => {
		sandbox = await startSandbox({
			apiKeys: ['cmp-key'],
			seed: { leads: 0, campaigns: 0, messages: 0 },
		});
		creds = { baseUrl: sandbox.url, apiKey: 'cmp-key' };
	});
	beforeEach(() => sandbox.reset({ leads: 0, campaigns: 0, messages: 0 }));
	afterAll(async () => sandbox.stop());

	const last = () => sandbox.requests().slice(-1)[0];
	const builderSteps = {
		step: [
			{ type: 'connection_request', note: 'Hi {{firstName}}, great to connect!' },
			{ type: 'message', delayDays: 2, body: 'Thanks for connecting.' },
			{ type: 'message', delayDays: 0, body: 'One more thing.' },
		],
	};

	it('Create with the step builder sends the ordered steps, the Note with {{firstName}} literally', async () => {
		const { items, error } = await runNode(creds, {
			resource: 'campaign',
			operation: 'create',
			name: 'Founders Q3',
			campaignType: 'connection_message',
			leadListId: 'list-7',
			stepsMode: 'builder',
			steps: builderSteps,
		});
		expect(error).toBeUndefined();
		expect(last().body).toEqual({
			name: 'Founders Q3',
			type: 'connection_message',
			lead_list_id: 'list-7',
			steps: [
				{ type: 'connection_request', note: 'Hi {{firstName}}, great to connect!' },
				{ type: 'message', delay_days: 2, body: 'Thanks for connecting.' },
				{ type: 'message', delay_days: 0, body: 'One more thing.' },
			],
		});
		const stored = sandbox.store.campaigns.get(items[0].json.id as string)!;
		expect(stored.status).toBe('draft');
		expect(stored.steps[0]).toEqual({
			type: 'connection_request',
			note: 'Hi {{firstName}}, great to connect!',
		});
	});

	it("keeps {{firstName}} literal in an expression written as the Note's hint says", async () => {
		const { error } = await runNode(
			creds,
			{
				resource: 'campaign',
				operation: 'create',
				name: 'Expr',
				stepsMode: 'builder',
				steps: {
					step: [
						{
							type: 'connection_request',
							note: '=Hello {{ "{{" }}firstName}} from {{ $json.company }}',
						},
					],
				},
			},
			[{ company: 'Acme' }],
		);
		expect(error).toBeUndefined();
		expect((last().body as { steps: unknown[] }).steps).toEqual([
			{ type: 'connection_request', note: 'Hello {{firstName}} from Acme' },
		]);
	});

	it('Create with a custom type and raw JSON steps passes unknown step types through', async () => {
		const stepsJson = JSON.stringify([
			{ type: 'profile_visit' },
			{ type: 'connection_request', note: 'Hi {{firstName}}' },
			{ type: 'inmail', subject: 'Hello', body: 'Long text' },
		]);
		const { items, error } = await runNode(creds, {
			resource: 'campaign',
			operation: 'create',
			name: 'Raw',
			campaignType: '__custom',
			customType: 'inmail_sequence',
			stepsMode: 'json',
			stepsJson,
		});
		expect(error).toBeUndefined();
		expect(last().body).toEqual({
			name: 'Raw',
			type: 'inmail_sequence',
			steps: JSON.parse(stepsJson),
		});
		expect(sandbox.store.campaigns.get(items[0].json.id as string)?.steps).toHaveLength(3);
	});

	it('refuses bad steps before any request, naming the step and field', async () => {
		const before = sandbox.requests().length;
		const noBody = await runNode(creds, {
			resource: 'campaign',
			operation: 'create',
			name: 'X',
			stepsMode: 'builder',
			steps: {
				step: [{ type: 'connection_request' }, { type: 'message', delayDays: 1, body: '  ' }],
			},
		});
		expect(noBody.error?.message).toBe('Steps: step 2 (Message) has no Body');
		const badJson = await runNode(creds, {
			resource: 'campaign',
			operation: 'create',
			name: 'X',
			stepsMode: 'json',
			stepsJson: '[{"type": "message"',
		});
		expect(badJson.error?.message).toMatch(/^Steps \(JSON\) is not valid JSON/);
		const noType = await runNode(creds, {
			resource: 'campaign',
			operation: 'create',
			name: 'X',
			stepsMode: 'json',
			stepsJson: '[{"note": "x"}]',
		});
		expect(noType.error?.message).toBe('Steps (JSON): step 1 has no "type"');
		const noSteps = await runNode(creds, {
			resource: 'campaign',
			operation: 'create',
			name: 'X',
			stepsMode: 'builder',
			steps: {},
		});
		expect(noSteps.error?.message).toBe('A campaign needs at least one step');
		expect(sandbox.requests().length).toBe(before);
	});

	it("the server's field messages reach the user on a 422", async () => {
		const { error } = await runNode(creds, {
			resource: 'campaign',
			operation: 'create',
			name: 'X',
			stepsMode: 'json',
			stepsJson: '[{"type": "message", "delay_days": -1, "body": "b"}]',
		});
		expect(error?.message).toMatch(/^The service rejected the request: steps\[0\]\.delay_days: /);
		expect((error as { httpCode?: string }).httpCode).toBe('422');
	});

	it('Start, Pause, Get, Get Analytics; a second Start is a clear 409', async () => {
		const campaign = sandbox.store.addCampaign({
			name: 'Live',
			type: 'connection_message',
			steps: [{ type: 'connection_request' }],
		});
		const started = await runNode(creds, {
			resource: 'campaign',
			operation: 'start',
			campaignId: rl(campaign.id),
		});
		expect(started.items[0].json).toMatchObject({ id: campaign.id, status: 'active' });
		expect(last()).toMatchObject({
			method: 'POST',
			path: `/api/v1/campaigns/${campaign.id}/start`,
		});

		const again = await runNode(creds, {
			resource: 'campaign',
			operation: 'start',
			campaignId: rl(campaign.id),
		});
		expect(again.error?.message).toMatch(/already active/);
		expect(again.error?.description).toBe('Nothing was changed.');

		const paused = await runNode(creds, {
			resource: 'campaign',
			operation: 'pause',
			campaignId: rl(campaign.id),
		});
		expect(paused.items[0].json).toMatchObject({ status: 'paused' });
		expect(sandbox.store.campaigns.get(campaign.id)?.status).toBe('paused');

		const got = await runNode(creds, {
			resource: 'campaign',
			operation: 'get',
			campaignId: rl(campaign.id),
		});
		expect(got.items.map((i) => i.json.status)).toEqual(['paused']);

		const analytics = await runNode(creds, {
			resource: 'campaign',
			operation: 'getAnalytics',
			campaignId: rl(campaign.id),
		});
		expect(analytics.items).toHaveLength(1);
		expect(analytics.items[0].json).toMatchObject({
			campaign_id: campaign.id,
			connection_rate: expect.any(Number),
			reply_rate: expect.any(Number),
			steps: expect.any(Array),
		});
		expect(last().path).toBe(`/api/v1/campaigns/${campaign.id}/analytics`);
	});

	it('Get Many: Limit 7 is one request for 7; Return All walks every page', async () => {
		for (let i = 0; i < 130; i++)
			sandbox.store.addCampaign({
				name: `C${i}`,
				type: 'connection_message',
				steps: [{ type: 'connection_request' }],
			});
		let since = sandbox.requests().length;
		const limited = await runNode(creds, {
			resource: 'campaign',
			operation: 'getAll',
			returnAll: false,
			limit: 7,
		});
		expect(limited.items).toHaveLength(7);
		expect(
			sandbox
				.requests()
				.slice(since)
				.map((r) => r.query),
		).toEqual([{ page: '1', per_page: '7' }]);
		since = sandbox.requests().length;
		const all = await runNode(creds, {
			resource: 'campaign',
			operation: 'getAll',
			returnAll: true,
		});
		expect(new Set(all.items.map((i) => i.json.id)).size).toBe(130);
		expect(sandbox.requests().length - since).toBe(2);
	});
});

describe('Campaign steps that can run again', () => {
	let sandbox: Sandbox;
	let creds: { baseUrl: string; apiKey: string };

	beforeAll(async () => {
		sandbox = await startSandbox({
			apiKeys: ['again-key'],
			rateLimit: 100_000,
			seed: { leads: 0, campaigns: 0, messages: 0 },
		});
		creds = { baseUrl: sandbox.url, apiKey: 'again-key' };
	});
	beforeEach(() => sandbox.reset({ leads: 0, campaigns: 0, messages: 0 }));
	afterAll(async () => sandbox.stop());

	const since = () => sandbox.requests().length;
	const endpoints = (from: number) =>
		sandbox
			.requests()
			.slice(from)
			.map((r) => `${r.method} ${r.path} ${r.status}`);
	const addCampaign = (name: string) =>
		sandbox.store.addCampaign({
			name,
			type: 'connection_message',
			steps: [{ type: 'connection_request' }],
		});
	const create = (name: string, ifNameTaken?: string) => ({
		resource: 'campaign',
		operation: 'create',
		name,
		stepsMode: 'builder',
		steps: { step: [{ type: 'connection_request', note: 'Hi' }] },
		...(ifNameTaken ? { ifNameTaken } : {}),
	});

	describe('Create: If a Campaign Has This Name', () => {
		it('Use Existing (the default): the first run creates, the second outputs that campaign and creates nothing', async () => {
			for (let i = 0; i < 130; i++) addCampaign(`Other ${i}`);
			let from = since();
			const first = await runNode(creds, create(' CRM sync '));
			expect(first.error).toBeUndefined();
			expect(first.items[0].json).toMatchObject({ name: 'CRM sync', outcome: 'created' });
			// 130 campaigns at 100 per page: 2 reads, then the create.
			expect(endpoints(from)).toEqual([
				'GET /api/v1/campaigns 200',
				'GET /api/v1/campaigns 200',
				'POST /api/v1/campaigns 201',
			]);
			from = since();
			const second = await runNode(creds, create('CRM sync', 'useExisting'));
			expect(second.items[0].json).toEqual({
				...sandbox.store.campaigns.get(first.items[0].json.id as string),
				outcome: 'existing',
			});
			expect(endpoints(from)).toEqual(['GET /api/v1/campaigns 200', 'GET /api/v1/campaigns 200']);
			expect(sandbox.stats().creates.campaign).toBe(1);
		});

		it('matches the exact name: another case or another name is another campaign', async () => {
			addCampaign('crm sync');
			addCampaign('CRM sync 2');
			const { items } = await runNode(creds, create('CRM sync'));
			expect(items[0].json.outcome).toBe('created');
			expect(sandbox.stats().creates.campaign).toBe(1);
		});

		it('two items with the same name in one run: one campaign', async () => {
			const { items } = await runNode(creds, create('={{ $json.name }}'), [
				{ name: 'Same' },
				{ name: 'Same' },
				{ name: 'Different' },
			]);
			expect(items.map((i) => i.json.outcome)).toEqual(['created', 'existing', 'created']);
			expect(items[1].json.id).toBe(items[0].json.id);
			expect(sandbox.stats().creates.campaign).toBe(2);
		});

		it('several campaigns with the name: a clear error naming their IDs, nothing created', async () => {
			const a = addCampaign('Twin');
			const b = addCampaign('Twin');
			const { error } = await runNode(creds, create('Twin'));
			expect(error?.message).toBe(
				`2 campaigns are named "Twin" (${b.id}, ${a.id}): cannot tell which to use`,
			);
			expect(error?.description).toMatch(/Create Another/);
			expect(sandbox.stats().creates.campaign).toBe(0);
		});

		it('Fail: an existing name is an error naming the campaign; a new name is created', async () => {
			const taken = addCampaign('Taken');
			const { error } = await runNode(creds, create('Taken', 'fail'));
			expect(error?.message).toBe(`A campaign named "Taken" already exists (${taken.id})`);
			expect(error?.description).toMatch(/^Nothing was created/);
			const fresh = await runNode(creds, create('Fresh', 'fail'));
			expect(fresh.items[0].json).toMatchObject({ name: 'Fresh', outcome: 'created' });
			expect(sandbox.stats().creates.campaign).toBe(1);
		});

		it('Create Another: one request, no check, the output as before (no outcome)', async () => {
			addCampaign('Dup');
			const from = since();
			const { items } = await runNode(creds, create('Dup', 'create'));
			expect(endpoints(from)).toEqual(['POST /api/v1/campaigns 201']);
			expect(items[0].json).toEqual(sandbox.store.campaigns.get(items[0].json.id as string));
			expect(sandbox.store.findCampaigns().filter((c) => c.name === 'Dup')).toHaveLength(2);
		});

		it('Continue On Fail: an item whose name is taken twice gives an error item, the others go on', async () => {
			addCampaign('Twin');
			addCampaign('Twin');
			const { items, error } = await runNode(
				creds,
				create('={{ $json.name }}'),
				[{ name: 'Twin' }, { name: 'Solo' }, { name: '' }],
				{ continueOnFail: true },
			);
			expect(error).toBeUndefined();
			expect(items.map((i) => i.json.outcome ?? i.json.error)).toEqual([
				expect.stringMatching(/^2 campaigns are named "Twin"/),
				'created',
				'Name is empty',
			]);
		});
	});

	describe.each([
		['start', 'succeedIfActive', 'active', 'started', 'paused'],
		['pause', 'succeedIfPaused', 'paused', 'paused', 'active'],
	] as const)('%s: Options > %s', (operation, option, state, outcome, otherState) => {
		const run = (id: string, on?: boolean, continueOnFail = false) =>
			runNode(
				creds,
				{
					resource: 'campaign',
					operation,
					campaignId: rl(id),
					...(on === undefined ? {} : { options: { [option]: on } }),
				},
				[{}],
				{ continueOnFail },
			);
		const inState = (status: 'draft' | 'active' | 'paused') => {
			const campaign = addCampaign(`In ${status}`);
			if (status !== 'draft') sandbox.store.setCampaignStatus(campaign, status);
			return campaign;
		};

		it(`on: a campaign already ${state} is output unchanged (2 requests); otherwise outcome "${outcome}" (1 request)`, async () => {
			const already = inState(state);
			let from = since();
			const same = await run(already.id, true);
			expect(same.error).toBeUndefined();
			expect(same.items.map((i) => i.json)).toEqual([
				{ ...sandbox.store.campaigns.get(already.id), outcome: 'unchanged' },
			]);
			expect(endpoints(from)).toEqual([
				`POST /api/v1/campaigns/${already.id}/${operation} 409`,
				`GET /api/v1/campaigns/${already.id} 200`,
			]);

			const other = inState(otherState);
			from = since();
			const changed = await run(other.id, true);
			expect(changed.items[0].json).toMatchObject({ id: other.id, status: state, outcome });
			expect(endpoints(from)).toEqual([`POST /api/v1/campaigns/${other.id}/${operation} 200`]);
		});

		it(`off (the default): a campaign already ${state} is the 409 error as before; a change has no outcome`, async () => {
			const already = inState(state);
			for (const on of [undefined, false]) {
				const { error } = await run(already.id, on);
				expect(error?.message).toMatch(/already/);
				expect((error as { httpCode?: string }).httpCode).toBe('409');
			}
			const other = inState(otherState);
			const changed = await run(other.id);
			expect(changed.items[0].json).toEqual(sandbox.store.campaigns.get(other.id));
		});

		it('on: a 409 for another reason stays an error (the campaign is read, not in that state)', async () => {
			const campaign = inState(otherState);
			sandbox.addFault({ path: `/api/v1/campaigns/${campaign.id}/${operation}`, status: 409 });
			const from = since();
			const { error } = await run(campaign.id, true);
			expect((error as { httpCode?: string }).httpCode).toBe('409');
			expect(endpoints(from)).toEqual([
				`POST /api/v1/campaigns/${campaign.id}/${operation} 409`,
				`GET /api/v1/campaigns/${campaign.id} 200`,
			]);
		});

		it('on, with Continue On Fail: an unknown campaign gives an error item', async () => {
			const { items, error } = await run('cmp_missing', true, true);
			expect(error).toBeUndefined();
			expect(items[0].json.error).toBe('Campaign "cmp_missing" was not found');
		});
	});

	it('pause with the option on: a draft is not "paused", so the 409 stays an error', async () => {
		const draft = addCampaign('Draft');
		const { error } = await runNode(creds, {
			resource: 'campaign',
			operation: 'pause',
			campaignId: rl(draft.id),
			options: { succeedIfPaused: true },
		});
		expect((error as { httpCode?: string }).httpCode).toBe('409');
		expect(sandbox.store.campaigns.get(draft.id)?.status).toBe('draft');
	});
});
