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

describe('Message > Send: Options > Skip If Already Sent', () => {
	let sandbox: Sandbox;
	let creds: { baseUrl: string; apiKey: string };

	beforeAll(async () => {
		sandbox = await startSandbox({
			apiKeys: ['skip-key'],
			rateLimit: 100_000,
			seed: { leads: 0, campaigns: 0, messages: 0 },
		});
		creds = { baseUrl: sandbox.url, apiKey: 'skip-key' };
	});
	beforeEach(() => sandbox.reset({ leads: 0, campaigns: 0, messages: 0 }));
	afterAll(async () => sandbox.stop());

	const sendParameters = (skipIfAlreadySent?: boolean) => ({
		resource: 'message',
		operation: 'send',
		leadId: rl('={{ $json.lead }}'),
		body: '={{ $json.text }}',
		...(skipIfAlreadySent === undefined ? {} : { options: { skipIfAlreadySent } }),
	});
	const leads = (count: number) =>
		Array.from({ length: count }, (_, i) => sandbox.store.addLead({ first_name: `L${i}` }).id);
	const since = () => sandbox.requests().length;
	const endpoints = (from: number) =>
		sandbox
			.requests()
			.slice(from)
			.map((r) => `${r.method} ${r.path}`);

	it('off (the default): sends every time, the output is the message as before (no outcome)', async () => {
		const [lead] = leads(1);
		for (const parameters of [sendParameters(), sendParameters(false)]) {
			const from = since();
			const { items, error } = await runNode(creds, parameters, [{ lead, text: 'Hello' }]);
			expect(error).toBeUndefined();
			expect(endpoints(from)).toEqual(['POST /api/v1/messages']);
			expect(items[0].json).not.toHaveProperty('outcome');
			const stored = sandbox.store
				.findMessages({ lead_id: lead })
				.find((m) => m.id === items[0].json.id);
			expect(items[0].json).toEqual(stored);
		}
		expect(sandbox.store.findMessages({ lead_id: lead })).toHaveLength(2);
	});

	it('on: the first run sends (one read + one send per item), the second sends nothing', async () => {
		const ids = leads(5);
		const inputs = ids.map((lead, i) => ({ lead, text: `Hi ${i}` }));
		let from = since();
		const first = await runNode(creds, sendParameters(true), inputs);
		expect(first.error).toBeUndefined();
		expect(first.items.map((i) => i.json.outcome)).toEqual(Array(5).fill('sent'));
		expect(endpoints(from).sort()).toEqual(
			[...Array(5).fill('GET /api/v1/messages'), ...Array(5).fill('POST /api/v1/messages')].sort(),
		);
		const reads = sandbox
			.requests()
			.slice(from)
			.filter((r) => r.method === 'GET');
		expect(reads.map((r) => r.query.lead_id).sort()).toEqual([...ids].sort());

		from = since();
		const second = await runNode(creds, sendParameters(true), inputs);
		expect(second.error).toBeUndefined();
		expect(endpoints(from)).toEqual(Array(5).fill('GET /api/v1/messages'));
		expect(second.items.map((i) => i.json.outcome)).toEqual(Array(5).fill('skipped'));
		// The skipped item is the message sent the first time, paired with its input item.
		expect(second.items.map((i) => i.json.id)).toEqual(first.items.map((i) => i.json.id));
		expect(second.items.map((i) => i.pairedItem)).toEqual(inputs.map((_, item) => ({ item })));
		expect(sandbox.stats().creates.message).toBe(5);
		expect(sandbox.stats().duplicateCreates).toBe(0);
	});

	it('matches the body trimmed; a failed send, an inbound message or another text do not count', async () => {
		const [lead, other] = leads(2);
		const failed = sandbox.store.addMessage({
			lead_id: lead,
			campaign_id: null,
			step_index: null,
			direction: 'outbound',
			status: 'failed',
			body: 'Welcome',
		});
		sandbox.store.addMessage({
			lead_id: lead,
			campaign_id: null,
			step_index: null,
			direction: 'inbound',
			status: 'received',
			body: 'Hello there',
		});
		const delivered = sandbox.store.addMessage({
			lead_id: lead,
			campaign_id: null,
			step_index: null,
			direction: 'outbound',
			status: 'delivered',
			body: '  Thanks!\n',
		});
		sandbox.store.addMessage({
			lead_id: other,
			campaign_id: null,
			step_index: null,
			direction: 'outbound',
			status: 'sent',
			body: 'Only for the other lead',
		});
		const { items, error } = await runNode(creds, sendParameters(true), [
			{ lead, text: 'Thanks!' },
			{ lead, text: ' Welcome ' },
			{ lead, text: 'Hello there' },
			{ lead, text: 'Only for the other lead' },
		]);
		expect(error).toBeUndefined();
		expect(items.map((i) => [i.json.outcome, i.json.id === delivered.id])).toEqual([
			['skipped', true],
			['sent', false],
			['sent', false],
			['sent', false],
		]);
		expect(items[1].json.id).not.toBe(failed.id);
		expect(sandbox.stats().creates.message).toBe(3);
	});

	it("reads every page of the lead's messages: pages + 1 requests at most per item", async () => {
		const [lead] = leads(1);
		sandbox.insertMessages({ count: 250, lead_id: lead, status: 'delivered', body: 'Older' });
		const from = since();
		const { items } = await runNode(creds, sendParameters(true), [{ lead, text: 'New one' }]);
		expect(items[0].json.outcome).toBe('sent');
		// 250 messages at the 100 the sandbox serves per page: 3 pages, then the send.
		expect(endpoints(from)).toEqual([
			...Array(3).fill('GET /api/v1/messages'),
			'POST /api/v1/messages',
		]);
		const again = since();
		const second = await runNode(creds, sendParameters(true), [{ lead, text: 'New one' }]);
		expect(second.items[0].json.outcome).toBe('skipped');
		expect(endpoints(again).every((e) => e === 'GET /api/v1/messages')).toBe(true);
		expect(endpoints(again).length).toBeLessThanOrEqual(3);
	});

	it('two items with the same lead and text in one run: one send, the second skipped', async () => {
		const [lead] = leads(1);
		const { items } = await runNode(creds, sendParameters(true), [
			{ lead, text: 'Twice' },
			{ lead, text: 'Twice ' },
			{ lead, text: 'Once' },
		]);
		expect(items.map((i) => i.json.outcome)).toEqual(['sent', 'skipped', 'sent']);
		expect(items[1].json.id).toBe(items[0].json.id);
		expect(sandbox.store.findMessages({ lead_id: lead })).toHaveLength(2);
	});

	it('re-run after a failed execution (the 31st send stored, then answered 500): 0 sent twice', async () => {
		const ids = leads(50);
		const inputs = ids.map((lead, i) => ({ lead, text: `Hello number ${i}` }));
		sandbox.addFault({
			method: 'POST',
			path: '/api/v1/messages',
			status: 500,
			after: true,
			skip: 30,
		});
		const failed = await runNode(creds, sendParameters(true), inputs);
		expect(failed.error?.message).toMatch(/unavailable \(HTTP 500\)/);
		expect(failed.error?.description).toMatch(/not repeated/);
		// Every item ran (they start together): all 50 stored, the 31st answered 500.
		expect(sandbox.stats().creates.message).toBe(50);
		expect(sandbox.requests().filter((r) => r.status === 500)).toHaveLength(1);
		const from = since();
		const rerun = await runNode(creds, sendParameters(true), inputs);
		expect(rerun.error).toBeUndefined();
		expect(rerun.items.map((i) => i.json.outcome)).toEqual(Array(50).fill('skipped'));
		expect(endpoints(from)).toEqual(Array(50).fill('GET /api/v1/messages'));
		for (const lead of ids) expect(sandbox.store.findMessages({ lead_id: lead })).toHaveLength(1);
		expect(sandbox.stats().creates.message).toBe(50);
		expect(sandbox.stats().duplicateCreates).toBe(0);
	});

	it('the same re-run with the option off sends the 50 again (what the option prevents)', async () => {
		const ids = leads(50);
		const inputs = ids.map((lead, i) => ({ lead, text: `Hello number ${i}` }));
		sandbox.addFault({
			method: 'POST',
			path: '/api/v1/messages',
			status: 500,
			after: true,
			skip: 30,
		});
		await runNode(creds, sendParameters(false), inputs);
		await runNode(creds, sendParameters(false), inputs);
		expect(sandbox.stats().creates.message).toBe(100);
		expect(sandbox.stats().duplicateCreates).toBe(50);
	});

	it('Continue On Fail: a failed read or send gives that item an error item, the others go on', async () => {
		const ids = leads(3);
		sandbox.store.addMessage({
			lead_id: ids[2],
			campaign_id: null,
			step_index: null,
			direction: 'outbound',
			status: 'sent',
			body: 'Hi 2',
		});
		sandbox.addFault({
			method: 'GET',
			path: '/api/v1/messages',
			query: { lead_id: ids[0] },
			status: 401,
		});
		const { items, error } = await runNode(
			creds,
			sendParameters(true),
			[
				{ lead: ids[0], text: 'Hi 0' },
				{ lead: 'ld_unknown', text: 'Hi 1' },
				{ lead: ids[2], text: 'Hi 2' },
				{ lead: ids[1], text: '  ' },
			],
			{ continueOnFail: true },
		);
		expect(error).toBeUndefined();
		expect(items.map((i) => i.json.outcome ?? i.json.error)).toEqual([
			expect.stringMatching(/refused the API key/),
			expect.stringMatching(/not found|rejected/),
			'skipped',
			'Body is empty',
		]);
		expect(items.map((i) => i.pairedItem)).toEqual([0, 1, 2, 3].map((item) => ({ item })));
		// The empty body was refused before any request: 3 reads, 1 send (to the unknown lead).
		expect(sandbox.stats().byEndpoint).toMatchObject({
			'GET /api/v1/messages': 3,
			'POST /api/v1/messages': 1,
		});
	});
});
