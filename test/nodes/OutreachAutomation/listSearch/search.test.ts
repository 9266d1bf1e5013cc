import { listSearch } from '../../../engine/harness';
import { startSandbox, type Sandbox } from '../../../sandbox/server';

describe('resource locator lists', () => {
	let sandbox: Sandbox;
	let creds: { baseUrl: string; apiKey: string };

	beforeAll(async () => {
		sandbox = await startSandbox({
			apiKeys: ['ls-key'],
			seed: { leads: 0, campaigns: 0, messages: 0 },
		});
		creds = { baseUrl: sandbox.url, apiKey: 'ls-key' };
		for (let i = 0; i < 120; i++)
			sandbox.store.addLead({
				first_name: `Ada${i}`,
				last_name: 'Lovelace',
				company: i % 2 ? 'Acme' : 'Globex',
			});
		for (let i = 0; i < 60; i++)
			sandbox.store.addCampaign({
				name: i === 0 ? 'Spring founders' : `Campaign ${i}`,
				type: 'connection_message',
				steps: [{ type: 'connection_request' }],
			});
	});
	afterAll(async () => sandbox.stop());

	it('lists leads page by page through the pipeline, with the search sent to the server', async () => {
		const first = await listSearch(creds, 'searchLeads', 'acme');
		expect(first.results).toHaveLength(50);
		expect(first.results[0]).toEqual({
			// The name, a separator, the company: "Ada1 Lovelace · Acme", not one long name.
			name: expect.stringMatching(/^Ada\d+ Lovelace · Acme \(ld_\w+\)$/),
			value: expect.stringMatching(/^ld_/),
		});
		expect(first.paginationToken).toBe('2');
		const second = await listSearch(creds, 'searchLeads', 'acme', first.paginationToken);
		expect(second.results).toHaveLength(10);
		expect(second.paginationToken).toBeUndefined();
		expect(
			sandbox
				.requests()
				.slice(-2)
				.map((r) => r.query),
		).toEqual([
			{ page: '1', per_page: '50', search: 'acme' },
			{ page: '2', per_page: '50', search: 'acme' },
		]);
	});

	it('labels a lead by what it has: no company, no separator; nothing but the ID, the ID', async () => {
		const named = sandbox.store.addLead({ first_name: 'Grace', last_name: 'Zuse' });
		const company = sandbox.store.addLead({ company: 'Zuse Works' });
		const bare = sandbox.store.addLead({
			linkedin_url: 'https://www.linkedin.com/in/zuse-example',
		});
		const { results } = await listSearch(creds, 'searchLeads');
		const byId = new Map(results.map((r) => [r.value, r.name]));
		expect(byId.get(named.id)).toBe(`Grace Zuse (${named.id})`);
		expect(byId.get(company.id)).toBe(`Zuse Works (${company.id})`);
		expect(byId.get(bare.id)).toBe(bare.id);
	});

	it('filters campaigns by name here, reading on until a match (the campaign list has no documented search)', async () => {
		const since = sandbox.requests().length;
		const found = await listSearch(creds, 'searchCampaigns', 'spring');
		expect(found.results.map((r) => r.name)).toEqual([
			expect.stringMatching(/^Spring founders \(cmp_\w+\)$/),
		]);
		expect(found.paginationToken).toBeUndefined();
		const sent = sandbox.requests().slice(since);
		expect(sent.map((r) => r.query)).toEqual([
			{ page: '1', per_page: '50' },
			{ page: '2', per_page: '50' },
		]);
		const unfiltered = await listSearch(creds, 'searchCampaigns');
		expect(unfiltered.results).toHaveLength(50);
		expect(unfiltered.paginationToken).toBe('2');
	});
});
