/**
 * Lead > Create or Update inside n8n's engine, against the sandbox playing each search a server may offer:
 * names only (the reference), the whole record, or none. Lookups are counted from the sandbox's log.
 */
import type { IDataObject } from 'n8n-workflow';

import { resetLearntSearch } from '../../../../nodes/OutreachAutomation/resources/leadUpsert';
import { resetRateLimitState } from '../../../../nodes/OutreachAutomation/transport/pacing';
import { resetPageSizes } from '../../../../nodes/OutreachAutomation/transport/pages';
import { runNode } from '../../../engine/harness';
import type { RequestLogEntry } from '../../../sandbox/server';
import { startSandbox, type Sandbox } from '../../../sandbox/server';
import type { SearchScope } from '../../../sandbox/schemas';

const EMPTY = { leads: 0, campaigns: 0, messages: 0 };

const UPSERT = {
	resource: 'lead',
	operation: 'upsert',
	linkedinUrl: '={{ $json.url }}',
	firstName: '={{ $json.first }}',
	company: '={{ $json.company }}',
	title: '={{ $json.title }}',
};

/** Profiles that are not substrings of one another, so a search for one matches one. */
const profile = (i: number) => `https://www.linkedin.com/in/lead-${i}-profile`;

interface Item extends IDataObject {
	url?: string;
	first?: string;
	company?: string;
	title?: string;
}

describe('Lead > Create or Update', () => {
	let sandbox: Sandbox;
	const creds = (key: string) => ({ baseUrl: sandbox.url, apiKey: key });

	beforeAll(async () => {
		sandbox = await startSandbox({
			apiKeys: ['upsert-names', 'upsert-record', 'upsert-ignored', 'upsert-input'],
			// The pacing is not under test here: a limit no run reaches.
			rateLimit: 100_000,
			seed: EMPTY,
		});
	});
	afterAll(async () => sandbox.stop());

	const isLookup = (r: RequestLogEntry) => r.method === 'GET' && r.path === '/api/v1/leads';
	const isWrite = (r: RequestLogEntry) => r.method === 'POST' || r.method === 'PATCH';
	const since = () => {
		const log = sandbox.requests();
		const from = log.length ? log[log.length - 1].seq : 0;
		return () => sandbox.requests(from);
	};
	const leadsWith = (url: string) =>
		[...sandbox.store.leads.values()].filter((lead) => lead.linkedin_url === url);

	/** M leads, lead i with profile i, first name P<i>, title "Engineer". */
	function seed(m: number) {
		for (let i = 0; i < m; i++)
			sandbox.store.addLead({
				first_name: `P${i}`,
				company: 'Acme',
				title: 'Engineer',
				linkedin_url: profile(i),
			});
	}

	/**
	 * N = 50 items against M = 300 leads: 10 equal to their lead, 10 with another title, 30 new profiles.
	 */
	const batch = (): Item[] => [
		...Array.from({ length: 10 }, (_, i) => ({
			url: profile(i),
			first: `P${i}`,
			company: 'Acme',
			title: 'Engineer',
		})),
		...Array.from({ length: 10 }, (_, i) => ({
			url: profile(100 + i),
			first: `P${100 + i}`,
			company: 'Acme',
			title: 'Director',
		})),
		...Array.from({ length: 30 }, (_, i) => ({
			url: profile(1000 + i),
			first: `New${i}`,
			company: 'Acme',
			title: 'Engineer',
		})),
	];

	describe.each<[SearchScope, boolean]>([
		['names', false],
		['record', true],
		['ignored', false],
	])('search scope %s', (scope, searchFindsProfiles) => {
		const key = `upsert-${scope}`;
		const M = 300;
		const P = 100; // the sandbox's largest page
		const listBound = Math.ceil(M / P) + 1;
		const bound = (n: number) => (searchFindsProfiles ? Math.min(n, listBound) : listBound) + 2;

		beforeEach(() => {
			sandbox.reset(EMPTY);
			sandbox.config({ searchScope: scope });
			resetLearntSearch();
			resetPageSizes();
		});

		it('50 items against 300 leads: created, updated, unchanged, within the lookup bound; the same 50 again write nothing', async () => {
			seed(M);
			const log = since();
			const first = await runNode(creds(key), UPSERT, batch());
			expect(first.error).toBeUndefined();
			expect(first.items.map((item) => item.json.outcome)).toEqual([
				...Array(10).fill('unchanged'),
				...Array(10).fill('updated'),
				...Array(30).fill('created'),
			]);
			expect(first.items.map((item) => item.json.linkedin_url)).toEqual(
				batch().map((item) => item.url),
			);
			expect(first.items[10].json).toMatchObject({ first_name: 'P100', title: 'Director' });
			expect(log().filter(isLookup).length).toBeLessThanOrEqual(bound(50));
			const writes = log().filter(isWrite);
			expect(writes.filter((r) => r.method === 'POST')).toHaveLength(30);
			// Only the field that differs is sent.
			expect(writes.filter((r) => r.method === 'PATCH').map((r) => r.body)).toEqual(
				Array(10).fill({ title: 'Director' }),
			);
			expect(sandbox.store.leads.size).toBe(M + 30);

			const again = since();
			const second = await runNode(creds(key), UPSERT, batch());
			expect(second.error).toBeUndefined();
			expect(second.items.map((item) => item.json.outcome)).toEqual(Array(50).fill('unchanged'));
			expect(again().filter(isWrite)).toHaveLength(0);
			// What was learnt is kept per credential: the second run needs no more than the first.
			expect(again().filter(isLookup).length).toBeLessThanOrEqual(bound(50));
			expect(sandbox.store.leads.size).toBe(M + 30);
		});

		it('3 items against 300 leads: within min(N, pages) + 2 lookups, the second run too', async () => {
			seed(M);
			const items = [
				{ url: profile(7), first: 'P7', company: 'Acme', title: 'Engineer' },
				{ url: profile(8), first: 'P8', company: 'Acme', title: 'CTO' },
				{ url: profile(5000), first: 'Fresh', company: 'Acme', title: 'Engineer' },
			];
			for (let run = 0; run < 2; run++) {
				const log = since();
				const { items: out, error } = await runNode(creds(key), UPSERT, items);
				expect(error).toBeUndefined();
				expect(out.map((item) => item.json.outcome)).toEqual(
					run === 0 ? ['unchanged', 'updated', 'created'] : Array(3).fill('unchanged'),
				);
				const lookups = log().filter(isLookup);
				expect(lookups.length).toBeLessThanOrEqual(bound(3));
				// Searches stand in for the list only where the search is proven to find profiles.
				const searches = lookups.filter((r) => r.query.search !== undefined);
				// A search that finds profiles is checked again each run (1 request); one that does not is
				// remembered, and the second run reads the list straight away.
				if (searchFindsProfiles) expect(searches.length).toBe(4);
				else expect(searches.length).toBeLessThanOrEqual(run === 0 ? 1 : 0);
			}
			expect(sandbox.store.leads.size).toBe(M + 1);
		});

		it('matches URL variants (scheme, www., case, trailing slash, query, fragment); two items of one profile make one lead, the second updating it', async () => {
			seed(5);
			const stored = sandbox.store.addLead({
				first_name: 'Ada',
				company: 'Engines',
				linkedin_url: 'https://www.linkedin.com/in/Ada-Lovelace/',
			});
			const { items, error } = await runNode(creds(key), UPSERT, [
				{ url: 'http://linkedin.com/in/ada-lovelace?trk=x#top', first: 'Ada', company: 'Engines' },
				{ url: 'HTTPS://WWW.LINKEDIN.COM/IN/ADA-LOVELACE', first: 'Ada', title: 'Countess' },
				{ url: 'https://www.linkedin.com/in/grace-hopper', first: 'Grace', title: 'Admiral' },
				{ url: 'https://linkedin.com/in/Grace-Hopper/', first: 'Grace', title: 'Rear Admiral' },
				{ url: 'https://linkedin.com/in/grace-hopper', first: 'Grace', title: 'Rear Admiral' },
			]);
			expect(error).toBeUndefined();
			expect(items.map((item) => item.json.outcome)).toEqual([
				'unchanged',
				'updated',
				'created',
				'updated',
				'unchanged',
			]);
			expect(items[1].json).toMatchObject({ id: stored.id, title: 'Countess' });
			// The stored address is kept: a variant of it is not a change.
			expect(sandbox.store.leads.get(stored.id)).toMatchObject({
				linkedin_url: 'https://www.linkedin.com/in/Ada-Lovelace/',
				title: 'Countess',
			});
			const graces = [...sandbox.store.leads.values()].filter((l) => l.first_name === 'Grace');
			expect(graces).toHaveLength(1);
			expect(graces[0]).toMatchObject({ title: 'Rear Admiral' });
			expect(new Set(items.slice(2).map((item) => item.json.id))).toEqual(new Set([graces[0].id]));
			expect(sandbox.store.leads.size).toBe(7);
		});

		it("addresses copied out of Google Docs or Sheets, or Outlook's Safe Links: the wrapped address finds its lead; two people's stay two leads", async () => {
			seed(5);
			const stored = sandbox.store.addLead({
				first_name: 'Ada',
				company: 'Engines',
				linkedin_url: 'https://www.linkedin.com/in/ada-lovelace',
			});
			const google = (address: string) =>
				`https://www.google.com/url?q=${address}&sa=D&source=editors&ust=1732870000000000&usg=AOvVaw2Kx9fZ`;
			const { items, error } = await runNode(creds(key), UPSERT, [
				{
					url: google('https://www.linkedin.com/in/ada-lovelace/'),
					first: 'Ada',
					company: 'Engines',
				},
				{ url: google('https://www.linkedin.com/in/grace-hopper'), first: 'Grace' },
				{
					url: `https://eur01.safelinks.protection.outlook.com/?url=${encodeURIComponent('https://www.linkedin.com/in/alan-turing')}&data=05%7C02%7C&reserved=0`,
					first: 'Alan',
				},
			]);
			expect(error).toBeUndefined();
			expect(items.map((item) => item.json.outcome)).toEqual(['unchanged', 'created', 'created']);
			expect(items[0].json.id).toBe(stored.id);
			// The address the wrapper leads to is what is stored.
			expect(items.slice(1).map((item) => item.json.linkedin_url)).toEqual([
				'https://www.linkedin.com/in/grace-hopper',
				'https://www.linkedin.com/in/alan-turing',
			]);
			expect(sandbox.store.leads.size).toBe(8);
		});

		it('several leads with the profile: that item fails naming their IDs; Continue On Fail lets the others go on', async () => {
			seed(5);
			const a = sandbox.store.addLead({
				first_name: 'Twin',
				linkedin_url: 'https://linkedin.com/in/twin',
			});
			const b = sandbox.store.addLead({
				first_name: 'Twin',
				linkedin_url: 'https://www.linkedin.com/in/Twin/',
			});
			const items = [
				{ url: 'https://www.linkedin.com/in/twin', first: 'Twin' },
				{ url: profile(2), first: 'P2', company: 'Acme', title: 'Engineer' },
			];
			const failed = await runNode(creds(key), UPSERT, items);
			expect(failed.error?.message).toContain(`2 leads already have this LinkedIn Profile URL`);
			expect(failed.error?.message).toContain(a.id);
			expect(failed.error?.message).toContain(b.id);

			const { items: out } = await runNode(creds(key), UPSERT, items, { continueOnFail: true });
			expect(out[0].json.error).toMatch(new RegExp(`${a.id}.*${b.id}|${b.id}.*${a.id}`));
			expect(out[1].json).toMatchObject({ outcome: 'unchanged', first_name: 'P2' });
			expect(sandbox.store.leads.size).toBe(7);
		});

		it('a create stored and answered 500 fails the run; the run again leaves each of 50 profiles once', async () => {
			seed(20);
			const items: Item[] = Array.from({ length: 50 }, (_, i) => ({
				url: profile(2000 + i),
				first: `R${i}`,
			}));
			sandbox.addFault({
				method: 'POST',
				path: '/api/v1/leads',
				status: 500,
				after: true,
				skip: 30,
			});
			const failed = await runNode(creds(key), UPSERT, items);
			expect(failed.error).toBeDefined();
			expect(sandbox.stats().creates.lead).toBe(50);

			const log = since();
			const again = await runNode(creds(key), UPSERT, items);
			expect(again.error).toBeUndefined();
			expect(again.items.map((item) => item.json.outcome)).toEqual(Array(50).fill('unchanged'));
			expect(log().filter(isWrite)).toHaveLength(0);
			for (const item of items) expect(leadsWith(item.url as string)).toHaveLength(1);
			expect(sandbox.store.leads.size).toBe(70);
		});
	});

	describe('bad input', () => {
		beforeEach(() => {
			sandbox.reset(EMPTY);
			resetRateLimitState();
		});

		it('three items of one profile, the update of the second failing: the third updates the lead the first created (no second create)', async () => {
			sandbox.addFault({ method: 'PATCH', path: '/api/v1/leads/*', status: 422 });
			const { items } = await runNode(
				creds('upsert-input'),
				UPSERT,
				[
					{ url: profile(3), first: 'First' },
					{ url: profile(3), first: 'Second' },
					{ url: profile(3), first: 'Third' },
				],
				{ continueOnFail: true },
			);
			expect(items[0].json.outcome).toBe('created');
			expect(items[1].json.error).toBeDefined();
			expect(items[2].json).toMatchObject({ outcome: 'updated', id: items[0].json.id });
			expect(leadsWith(profile(3))).toHaveLength(1);
			expect(leadsWith(profile(3))[0].first_name).toBe('Third');
		});

		it('a create answered without the lead fails that item, and a later item with the profile is not sent (no second create)', async () => {
			sandbox.addFault({ method: 'POST', path: '/api/v1/leads', kind: 'no-data' });
			const log = since();
			const { items } = await runNode(
				creds('upsert-input'),
				UPSERT,
				[
					{ url: profile(1), first: 'One' },
					{ url: `${profile(1)}/`, first: 'Again' },
					{ url: profile(2), first: 'Two' },
				],
				{ continueOnFail: true },
			);
			expect(items.map((item) => item.json.outcome ?? item.json.error)).toEqual([
				'The Outreach Automation API confirmed the request but sent no lead data',
				'Not sent: item 1 with the same LinkedIn Profile URL may have created the lead',
				'created',
			]);
			expect(log().filter((r) => r.method === 'POST')).toHaveLength(2);
			expect(leadsWith(profile(1))).toHaveLength(1);
		});

		it('a failure without Continue On Fail: a create still waiting for the rate limit is withdrawn unsent, and the next item of its profile is not taken for one that failed', async () => {
			// Two requests a minute: the list read and the first create; the others wait for the next
			// window when the first create fails (refused with a 500).
			sandbox.config({ rateLimit: 2, windowMs: 60_000, resetFormat: 'epoch-ms' });
			sandbox.addFault({ method: 'POST', path: '/api/v1/leads', status: 500 });
			const { error } = await runNode(creds('upsert-input'), UPSERT, [
				{ url: profile(1), first: 'One' },
				{ url: profile(2), first: 'Two' },
				{ url: `${profile(2)}/`, first: 'Again' },
			]);
			expect(error?.message).toMatch(/500|server/i);
			expect(error?.description).toContain('Of the other 2 items: 0 carried out, 2 not sent.');
			expect(sandbox.stats().requests).toBe(2);
			expect(sandbox.store.leads.size).toBe(0);
		});

		it('an item without a profile URL, or with one that is not a profile address, fails before any request; Continue On Fail gives error items and the others go on', async () => {
			const bad: Item[] = [
				{ first: 'NoUrl' },
				{ url: 'linkedin com/in/no-dot', first: 'A' },
				{ url: 'https://www.linkedin.com/', first: 'B' },
				{ url: 'https://exa mple.com/in/x', first: 'C' },
			];
			const log = since();
			const alone = await runNode(creds('upsert-input'), UPSERT, bad, { continueOnFail: true });
			expect(log()).toHaveLength(0);
			expect(alone.items.map((item) => item.json.error)).toEqual([
				'LinkedIn Profile URL is empty',
				'LinkedIn Profile URL "linkedin com/in/no-dot" is not a web address',
				'LinkedIn Profile URL "https://www.linkedin.com/" is the LinkedIn site itself: it names no one (item 3)',
				'LinkedIn Profile URL "https://exa mple.com/in/x" is not a web address (it contains spaces)',
			]);
			const stopped = await runNode(creds('upsert-input'), UPSERT, [bad[0]]);
			expect(stopped.error?.message).toBe('LinkedIn Profile URL is empty');
			expect(log()).toHaveLength(0);

			const mixed = await runNode(
				creds('upsert-input'),
				UPSERT,
				[bad[0], { url: profile(1), first: 'Good' }, bad[2]],
				{ continueOnFail: true },
			);
			expect(mixed.items.map((item) => item.json.outcome ?? item.json.error)).toEqual([
				'LinkedIn Profile URL is empty',
				'created',
				'LinkedIn Profile URL "https://www.linkedin.com/" is the LinkedIn site itself: it names no one (item 3)',
			]);
			expect(log().filter(isWrite)).toHaveLength(1);
			expect(sandbox.store.leads.size).toBe(1);
		});
	});
});
