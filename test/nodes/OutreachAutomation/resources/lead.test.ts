import { runNode } from '../../../engine/harness';
import { startSandbox, type Sandbox } from '../../../sandbox/server';

const rl = (value: string) => ({ __rl: true, mode: 'id', value });

describe('Lead', () => {
	let sandbox: Sandbox;
	let creds: { baseUrl: string; apiKey: string };

	beforeAll(async () => {
		sandbox = await startSandbox({
			apiKeys: ['lead-key'],
			seed: { leads: 0, campaigns: 0, messages: 0 },
		});
		creds = { baseUrl: sandbox.url, apiKey: 'lead-key' };
	});
	beforeEach(() => sandbox.reset({ leads: 0, campaigns: 0, messages: 0 }));
	afterAll(async () => sandbox.stop());

	const last = () => sandbox.requests().slice(-1)[0];

	it('Create sends the filled fields under their wire names, LinkedIn URL as linkedin_url, custom fields as given', async () => {
		const { items, error } = await runNode(creds, {
			resource: 'lead',
			operation: 'create',
			firstName: 'Ada',
			lastName: 'Lovelace',
			company: 'Analytical Engines',
			title: '',
			linkedinUrl: 'https://www.linkedin.com/in/ada',
			additionalFields: {
				leadListId: 'list-1',
				customFields: { field: [{ name: 'email', value: 'ada@example.com' }] },
			},
		});
		expect(error).toBeUndefined();
		expect(last().body).toEqual({
			first_name: 'Ada',
			last_name: 'Lovelace',
			company: 'Analytical Engines',
			linkedin_url: 'https://www.linkedin.com/in/ada',
			lead_list_id: 'list-1',
			email: 'ada@example.com',
		});
		expect(items).toHaveLength(1);
		const stored = sandbox.store.leads.get(items[0].json.id as string);
		expect(stored).toMatchObject({
			first_name: 'Ada',
			linkedin_url: 'https://www.linkedin.com/in/ada',
			email: 'ada@example.com',
		});
		expect(items[0].json).toMatchObject({ id: stored!.id, first_name: 'Ada' });
	});

	it('Create refuses an empty lead and a LinkedIn URL that is not a web address, before any request', async () => {
		const before = sandbox.requests().length;
		const empty = await runNode(creds, { resource: 'lead', operation: 'create' });
		expect(empty.error?.message).toBe('A lead needs at least one field');
		const badUrl = await runNode(creds, {
			resource: 'lead',
			operation: 'create',
			firstName: 'A',
			linkedinUrl: 'linkedin/in/a',
		});
		expect(badUrl.error?.message).toMatch(
			/LinkedIn Profile URL "linkedin\/in\/a" is not a web address/,
		);
		// An address the rule cannot send says why.
		const elsewhere = await runNode(creds, {
			resource: 'lead',
			operation: 'create',
			firstName: 'A',
			linkedinUrl:
				'https://www.linkedin.com/authwall?sessionRedirect=https%3A%2F%2Fexample.com%2Fa',
		});
		expect(elsewhere.error?.message).toMatch(/sign-in page leading to no LinkedIn profile/);
		expect(sandbox.requests().length).toBe(before);
		expect(sandbox.stats().creates.lead).toBe(0);
	});

	it('Create sends an address written without a scheme as a full one (https://)', async () => {
		const { items, error } = await runNode(creds, {
			resource: 'lead',
			operation: 'create',
			firstName: 'A',
			linkedinUrl: ' linkedin.com/in/a-scheme-less ',
		});
		expect(error).toBeUndefined();
		expect(items[0].json.linkedin_url).toBe('https://linkedin.com/in/a-scheme-less');
	});

	it('Get returns the lead; Update sends a PATCH with only the fields set; Delete confirms', async () => {
		const lead = sandbox.store.addLead({
			first_name: 'Grace',
			last_name: 'Hopper',
			company: 'Navy',
		});
		const got = await runNode(creds, { resource: 'lead', operation: 'get', leadId: rl(lead.id) });
		expect(got.items.map((i) => i.json.id)).toEqual([lead.id]);
		expect(last()).toMatchObject({ method: 'GET', path: `/api/v1/leads/${lead.id}` });

		const updated = await runNode(creds, {
			resource: 'lead',
			operation: 'update',
			leadId: rl(lead.id),
			updateFields: { company: 'US Navy', title: 'Rear Admiral' },
		});
		expect(updated.error).toBeUndefined();
		expect(last()).toMatchObject({
			method: 'PATCH',
			path: `/api/v1/leads/${lead.id}`,
			body: { company: 'US Navy', title: 'Rear Admiral' },
		});
		expect(sandbox.store.leads.get(lead.id)).toMatchObject({
			first_name: 'Grace',
			company: 'US Navy',
			title: 'Rear Admiral',
		});
		expect(updated.items[0].json).toMatchObject({ id: lead.id, company: 'US Navy' });

		const deleted = await runNode(creds, {
			resource: 'lead',
			operation: 'delete',
			leadId: rl(lead.id),
		});
		expect(deleted.items.map((i) => i.json)).toEqual([{ id: lead.id, deleted: true }]);
		expect(sandbox.store.leads.has(lead.id)).toBe(false);
	});

	it('Delete confirms even when the server answers with empty data', async () => {
		sandbox.config({ deleteReturnsEmpty: true });
		const lead = sandbox.store.addLead({ first_name: 'Empty' });
		const { items, error } = await runNode(creds, {
			resource: 'lead',
			operation: 'delete',
			leadId: rl(lead.id),
		});
		expect(error).toBeUndefined();
		expect(items.map((i) => i.json)).toEqual([{ id: lead.id, deleted: true }]);
		sandbox.config({ deleteReturnsEmpty: false });
	});

	it('Update clears a field added and left empty: text to "", list and campaign to null, custom fields too (checked at the sandbox)', async () => {
		const campaign = sandbox.store.addCampaign({
			name: 'C',
			type: 'connection_message',
			steps: [{ type: 'connection_request' }],
		});
		const lead = sandbox.store.addLead({
			first_name: 'Grace',
			company: 'Navy',
			title: 'Admiral',
			linkedin_url: 'https://www.linkedin.com/in/grace',
			lead_list_id: 'list-1',
			campaign_id: campaign.id,
			stage: 'won',
			source: 'crm',
		} as never);
		const { error, items } = await runNode(creds, {
			resource: 'lead',
			operation: 'update',
			leadId: rl(lead.id),
			updateFields: {
				company: '',
				title: '  ',
				linkedinUrl: '',
				leadListId: '',
				campaignId: '={{ $json.nothing }}',
				customFields: { field: [{ name: 'stage', value: '' }] },
			},
		});
		expect(error).toBeUndefined();
		expect(last().body).toEqual({
			company: '',
			title: '',
			linkedin_url: '',
			lead_list_id: null,
			campaign_id: null,
			stage: '',
		});
		expect(sandbox.store.leads.get(lead.id)).toMatchObject({
			first_name: 'Grace',
			company: '',
			title: '',
			linkedin_url: '',
			lead_list_id: null,
			campaign_id: null,
			stage: '',
			source: 'crm',
		});
		expect(items[0].json).toMatchObject({ id: lead.id, company: '', first_name: 'Grace' });
	});

	it('Create still leaves empty fields out, custom fields with an empty value too', async () => {
		const { error } = await runNode(creds, {
			resource: 'lead',
			operation: 'create',
			firstName: 'Ada',
			company: '',
			additionalFields: {
				leadListId: '',
				customFields: {
					field: [
						{ name: 'stage', value: '' },
						{ name: 'source', value: 'crm' },
					],
				},
			},
		});
		expect(error).toBeUndefined();
		expect(last().body).toEqual({ first_name: 'Ada', source: 'crm' });
	});

	it('Update with no field is refused before any request', async () => {
		const lead = sandbox.store.addLead({ first_name: 'Nobody' });
		const before = sandbox.requests().length;
		const { error } = await runNode(creds, {
			resource: 'lead',
			operation: 'update',
			leadId: rl(lead.id),
			updateFields: {},
		});
		expect(error?.message).toBe('Update Fields is empty: nothing to update');
		expect(sandbox.requests().length).toBe(before);
	});

	it('Get Many with filters sends search and campaign_id on every page', async () => {
		const campaign = sandbox.store.addCampaign({
			name: 'C',
			type: 'connection_message',
			steps: [{ type: 'connection_request' }],
		});
		for (let i = 0; i < 230; i++)
			sandbox.store.addLead({ first_name: `Match${i}`, company: 'Acme', campaign_id: campaign.id });
		for (let i = 0; i < 50; i++)
			sandbox.store.addLead({ first_name: `Other${i}`, company: 'Acme' });
		const since = sandbox.requests().length;
		const { items } = await runNode(creds, {
			resource: 'lead',
			operation: 'getAll',
			returnAll: true,
			filters: { search: 'match', campaignId: rl(campaign.id) },
		});
		const sent = sandbox.requests().slice(since);
		expect(sent.map((r) => r.query)).toEqual(
			[1, 2, 3].map((page) => ({
				page: String(page),
				per_page: '1000',
				search: 'match',
				campaign_id: campaign.id,
			})),
		);
		expect(new Set(items.map((i) => i.json.id)).size).toBe(230);
	});

	it('an id is URL-encoded in the path: "a/../b" reaches the server as one segment', async () => {
		const { error } = await runNode(creds, {
			resource: 'lead',
			operation: 'get',
			leadId: rl('a/../b'),
		});
		expect(last().path).toBe('/api/v1/leads/a%2F..%2Fb');
		expect(error?.message).toBe('Lead "a/../b" was not found');
	});
});

describe('Lead > Delete: Options > Succeed If Not Found', () => {
	let sandbox: Sandbox;
	let creds: { baseUrl: string; apiKey: string };

	beforeAll(async () => {
		sandbox = await startSandbox({
			apiKeys: ['gone-key'],
			rateLimit: 100_000,
			seed: { leads: 0, campaigns: 0, messages: 0 },
		});
		creds = { baseUrl: sandbox.url, apiKey: 'gone-key' };
	});
	beforeEach(() => sandbox.reset({ leads: 0, campaigns: 0, messages: 0 }));
	afterAll(async () => sandbox.stop());

	const remove = (succeedIfNotFound?: boolean, continueOnFail = false, inputs = [{}]) =>
		runNode(
			creds,
			{
				resource: 'lead',
				operation: 'delete',
				leadId: rl('={{ $json.id }}'),
				...(succeedIfNotFound === undefined ? {} : { options: { succeedIfNotFound } }),
			},
			inputs,
			{ continueOnFail },
		);
	const statuses = (from: number) =>
		sandbox
			.requests()
			.slice(from)
			.map((r) => `${r.method} ${r.status}`);

	it('on: run twice over the same leads, the second run succeeds with outcome "notFound", one request each', async () => {
		const ids = [1, 2, 3].map((i) => sandbox.store.addLead({ first_name: `G${i}` }).id);
		const inputs = ids.map((id) => ({ id }));
		let from = sandbox.requests().length;
		const first = await remove(true, false, inputs);
		expect(first.items.map((i) => i.json)).toEqual(
			ids.map((id) => ({ id, deleted: true, outcome: 'deleted' })),
		);
		expect(statuses(from)).toEqual(Array(3).fill('DELETE 200'));
		from = sandbox.requests().length;
		const second = await remove(true, false, inputs);
		expect(second.error).toBeUndefined();
		expect(second.items.map((i) => i.json)).toEqual(
			ids.map((id) => ({ id, deleted: false, outcome: 'notFound' })),
		);
		expect(statuses(from)).toEqual(Array(3).fill('DELETE 404'));
		expect(sandbox.store.leads.size).toBe(0);
	});

	it('off (the default): a lead already gone is the 404 error as before; a delete outputs what it did', async () => {
		const lead = sandbox.store.addLead({ first_name: 'Off' });
		const done = await remove(undefined, false, [{ id: lead.id }]);
		expect(done.items.map((i) => i.json)).toEqual([{ id: lead.id, deleted: true }]);
		for (const on of [undefined, false]) {
			const { error } = await remove(on, false, [{ id: lead.id }]);
			expect(error?.message).toBe(`Lead "${lead.id}" was not found`);
			expect((error as { httpCode?: string }).httpCode).toBe('404');
		}
	});

	it('on: other failures stay errors; with Continue On Fail they are error items and the others go on', async () => {
		const lead = sandbox.store.addLead({ first_name: 'Kept' });
		sandbox.addFault({ method: 'DELETE', path: `/api/v1/leads/${lead.id}`, status: 401 });
		const { items, error } = await remove(true, true, [
			{ id: lead.id },
			{ id: 'ld_gone' },
			{ id: '' },
		]);
		expect(error).toBeUndefined();
		expect(items.map((i) => i.json.outcome ?? i.json.error)).toEqual([
			expect.stringMatching(/refused the API key/),
			'notFound',
			'Lead ID is empty',
		]);
		expect(sandbox.store.leads.has(lead.id)).toBe(true);
	});

	it('on, against a server that answers a delete with no data: outcome "deleted"', async () => {
		sandbox.config({ deleteReturnsEmpty: true });
		const lead = sandbox.store.addLead({ first_name: 'Empty' });
		const { items } = await remove(true, false, [{ id: lead.id }]);
		expect(items.map((i) => i.json)).toEqual([{ id: lead.id, deleted: true, outcome: 'deleted' }]);
	});
});
