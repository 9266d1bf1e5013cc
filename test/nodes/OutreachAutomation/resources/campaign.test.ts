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
