import { runNode } from '../../../engine/harness';
import { startSandbox, type Sandbox } from '../../../sandbox/server';

const rl = (value: string) => ({ __rl: true, mode: 'id', value });

describe('Message', () => {
	let sandbox: Sandbox;
	let creds: { baseUrl: string; apiKey: string };

	beforeAll(async () => {
		sandbox = await startSandbox({
			apiKeys: ['msg-key'],
			seed: { leads: 0, campaigns: 0, messages: 0 },
		});
		creds = { baseUrl: sandbox.url, apiKey: 'msg-key' };
	});
	beforeEach(() => sandbox.reset({ leads: 0, campaigns: 0, messages: 0 }));
	afterAll(async () => sandbox.stop());

	const last = () => sandbox.requests().slice(-1)[0];

	it('Send posts lead_id and body, once per input item, and Get reads it back', async () => {
		const lead = sandbox.store.addLead({ first_name: 'Ada' });
		const { items, error } = await runNode(
			creds,
			{
				resource: 'message',
				operation: 'send',
				leadId: rl('={{ $json.lead }}'),
				body: '=Hi {{ $json.name }}',
			},
			[
				{ lead: lead.id, name: 'Ada' },
				{ lead: lead.id, name: 'again' },
			],
		);
		expect(error).toBeUndefined();
		expect(items.map((i) => i.json.body)).toEqual(['Hi Ada', 'Hi again']);
		expect(sandbox.stats().creates.message).toBe(2);
		expect(sandbox.store.findMessages({ lead_id: lead.id })).toHaveLength(2);

		const got = await runNode(creds, {
			resource: 'message',
			operation: 'get',
			messageId: items[0].json.id as string,
		});
		expect(got.items[0].json).toMatchObject({
			id: items[0].json.id,
			lead_id: lead.id,
			status: 'sent',
		});
		expect(last().path).toBe(`/api/v1/messages/${items[0].json.id}`);
	});

	it('Send refuses an empty body before any request', async () => {
		const before = sandbox.requests().length;
		const { error } = await runNode(creds, {
			resource: 'message',
			operation: 'send',
			leadId: rl('ld_1'),
			body: '   ',
		});
		expect(error?.message).toBe('Body is empty');
		expect(sandbox.requests().length).toBe(before);
	});

	it('Get Many filters by lead, campaign and status on every page, Limit 250 = 3 requests', async () => {
		const campaign = sandbox.store.addCampaign({
			name: 'C',
			type: 'connection_message',
			steps: [{ type: 'connection_request' }],
		});
		const lead = sandbox.store.addLead({ first_name: 'Ada', campaign_id: campaign.id });
		sandbox.insertMessages({
			count: 260,
			lead_id: lead.id,
			campaign_id: campaign.id,
			status: 'delivered',
		});
		sandbox.insertMessages({
			count: 40,
			lead_id: lead.id,
			campaign_id: campaign.id,
			status: 'read',
		});
		const since = sandbox.requests().length;
		const { items } = await runNode(creds, {
			resource: 'message',
			operation: 'getAll',
			returnAll: false,
			limit: 250,
			filters: { leadId: rl(lead.id), campaignId: rl(campaign.id), status: 'delivered' },
		});
		expect(items).toHaveLength(250);
		expect(items.every((i) => i.json.status === 'delivered')).toBe(true);
		expect(
			sandbox
				.requests()
				.slice(since)
				.map((r) => r.query),
		).toEqual(
			[1, 2, 3].map((page) => ({
				page: String(page),
				per_page: '100',
				lead_id: lead.id,
				campaign_id: campaign.id,
				status: 'delivered',
			})),
		);
	});
});
