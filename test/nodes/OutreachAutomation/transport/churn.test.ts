/**
 * The one list reader (transport/pages.ts) in n8n's engine against the sandbox while the list changes
 * between its page reads, on a script: removals placed before or after the reader's position, creations
 * (newest first: at the front). Every lead present for the whole walk comes back once, or the node fails
 * saying the list kept changing; never a silent short list.
 */
import { resetLearntSearch } from '../../../../nodes/OutreachAutomation/resources/leadUpsert';
import { resetPageSizes } from '../../../../nodes/OutreachAutomation/transport/pages';
import { resetRateLimitState } from '../../../../nodes/OutreachAutomation/transport/pacing';
import { runNode } from '../../../engine/harness';
import type { ChurnEventInput } from '../../../sandbox/schemas';
import { startSandbox, type Sandbox } from '../../../sandbox/server';

const KEY = 'list-churn-secret-key-7c1d';
const getAllLeads = { resource: 'lead', operation: 'getAll', returnAll: true };

describe('Return All while others change the list (scripted churn, 100 a page)', () => {
	let sandbox: Sandbox;
	let creds: { baseUrl: string; apiKey: string };

	beforeAll(async () => {
		sandbox = await startSandbox({ apiKeys: [KEY], seed: { leads: 0, campaigns: 0, messages: 0 } });
		creds = { baseUrl: sandbox.url, apiKey: KEY };
	});
	beforeEach(() => {
		sandbox.reset({ leads: 0, campaigns: 0, messages: 0 });
		resetRateLimitState();
		resetPageSizes();
	});
	afterAll(async () => sandbox.stop());

	const addLeads = (n: number) => {
		const ids: string[] = [];
		for (let i = 0; i < n; i++)
			ids.push(String(sandbox.store.addLead({ first_name: `Lead${i}`, company: 'Co' }).id));
		return ids;
	};

	/** Runs Return All over `n` leads with `script[k]` happening right after list read k + 1. */
	async function walk(
		n: number,
		script: Array<Omit<ChurnEventInput, 'after'> | undefined>,
		maxPerPage = 100,
	) {
		const ids = addLeads(n);
		sandbox.config({ maxPerPage });
		script.forEach((event, k) => {
			if (event) sandbox.addChurn({ after: k + 1, resource: 'leads', ...event });
		});
		const { items, error } = await runNode(creds, getAllLeads);
		const left = new Set(sandbox.churnLog().events.flatMap((e) => e.left));
		const got = items.map((item) => String(item.json.id));
		const pages = sandbox
			.requests()
			.filter((r) => r.method === 'GET')
			.map((r) => Number(r.query.page));
		return {
			error,
			got,
			pages,
			missing: ids.filter((id) => !left.has(id) && !got.includes(id)),
			stayed: ids.filter((id) => !left.has(id)).length,
		};
	}

	it('the reproduction: a delete before X, then a delete after X and a create: all 299 back, X included', async () => {
		// 300 leads; X is the first of page 2. Read 1, delete one before X (X moves to page 1); read 2
		// (the total drops, page 1 is read again); meanwhile one after X leaves and one arrives at the
		// front (X back on page 2, the total as before).
		const r = await walk(300, [{ removeAt: [50] }, { removeAt: [150], insert: 1 }]);
		expect(r.error).toBeUndefined();
		expect(r.stayed).toBe(298);
		expect(r.missing).toEqual([]);
		expect(new Set(r.got).size).toBe(r.got.length);
		expect(r.pages.slice(0, 3)).toEqual([1, 2, 1]);
	});

	it('mirror: an insert before and a delete after first, then the same pattern one page on', async () => {
		const r = await walk(300, [
			{ insert: 1, removeAt: [250] },
			{ removeAt: [150] },
			{ removeAt: [260], insert: 1 },
		]);
		expect(r.error).toBeUndefined();
		expect(r.missing).toEqual([]);
		expect(new Set(r.got).size).toBe(r.got.length);
	});

	it('several deletes on both sides of the reader, then as many creates and deletes after', async () => {
		const r = await walk(400, [
			{ removeBefore: 2, removeAfter: 2 },
			{ insert: 2, removeAfter: 2 },
			{ removeBefore: 3, removeAfter: 1 },
			{ insert: 3, removeAfter: 3 },
		]);
		expect(r.error).toBeUndefined();
		expect(r.missing).toEqual([]);
		expect(new Set(r.got).size).toBe(r.got.length);
	});

	it('a delete and a create between every two reads: every lead that stayed, once', async () => {
		// The first two intervals are the reproduction's with a create in the first as well; from then on
		// a lead leaves after the reader and one arrives at the front between every two reads.
		const r = await walk(350, [
			{ removeAt: [40, 60], insert: 1 },
			{ removeAt: [160], insert: 1 },
			...Array.from({ length: 20 }, () => ({ removeAfter: 1, insert: 1 })),
		]);
		expect(r.error).toBeUndefined();
		expect(r.missing).toEqual([]);
		expect(new Set(r.got).size).toBe(r.got.length);
	});

	it.each([1, 2, 3, 4, 5, 6])(
		'deletes and a create between every two reads, on alternate sides (churn seed %i): every lead that stayed, once',
		async (seed) => {
			sandbox.config({ faultSeed: seed });
			const r = await walk(
				450,
				// Odd intervals: the list shrinks before the reader (a re-read is due); even ones: it
				// grows at the front as much as it shrinks behind, the total unchanged.
				Array.from({ length: 40 }, (_, k) =>
					k % 2 === 0 ? { removeBefore: 2, insert: 1 } : { removeAfter: 1, insert: 1 },
				),
			);
			if (r.error) expect(r.error.message).toMatch(/kept changing/);
			else expect(r.missing).toEqual([]);
			expect(new Set(r.got).size).toBe(r.got.length);
		},
	);

	it('Create or Update during the same churn: the lead that moved is found, no profile created twice', async () => {
		// The reproduction against Create or Update's index: read 1 is its page 1, read 2 its probe of
		// the search (names only: it does not find profiles, so the whole list is read), read 3 page 2.
		const profile = (i: number) => `https://www.linkedin.com/in/churned-${i}-profile`;
		for (let i = 0; i < 300; i++)
			sandbox.store.addLead({ first_name: `P${i}`, linkedin_url: profile(i) });
		sandbox.config({ maxPerPage: 100 });
		resetLearntSearch();
		sandbox.addChurn({ after: 1, resource: 'leads', removeAt: [50] });
		sandbox.addChurn({ after: 3, resource: 'leads', removeAt: [150], insert: 1 });
		const items = Array.from({ length: 300 }, (_, i) => ({ url: profile(i), first: `P${i}` }));
		const { error } = await runNode(
			creds,
			{
				resource: 'lead',
				operation: 'upsert',
				linkedinUrl: '={{ $json.url }}',
				firstName: '={{ $json.first }}',
			},
			items,
			{ continueOnFail: true },
		);
		expect(error).toBeUndefined();
		const count = new Map<string, number>();
		for (const lead of sandbox.store.leads.values())
			if (lead.linkedin_url) count.set(lead.linkedin_url, (count.get(lead.linkedin_url) ?? 0) + 1);
		expect([...count].filter(([, k]) => k > 1)).toEqual([]);
	});

	it('a list whose total changes at every read: Get Many fails saying so, Create or Update creates nothing', async () => {
		const profile = (i: number) => `https://www.linkedin.com/in/restless-${i}-profile`;
		for (let i = 0; i < 500; i++)
			sandbox.store.addLead({ first_name: `P${i}`, linkedin_url: profile(i) });
		// After every read one lead leaves behind the reader's position: the total never holds still.
		sandbox.config({ maxPerPage: 100 });
		for (let k = 1; k <= 200; k++)
			sandbox.addChurn({ after: k, resource: 'leads', removeAfter: 1 });
		const list = await runNode(creds, getAllLeads);
		expect(list.error?.message).toMatch(/kept changing while it was read/);
		expect(list.error?.description).toMatch(/Run it again when fewer changes/);
		const reads = sandbox.requests().length;
		expect(reads).toBeLessThanOrEqual(6 + 2 * (20 + 6));

		resetLearntSearch();
		const before = sandbox.store.leads.size;
		const upsert = await runNode(
			creds,
			{
				resource: 'lead',
				operation: 'upsert',
				linkedinUrl: '={{ $json.url }}',
				firstName: '={{ $json.first }}',
			},
			[
				{ url: profile(499), first: 'P499' },
				{ url: profile(9999), first: 'New' },
			],
			{ continueOnFail: true },
		);
		expect(upsert.items.map((item) => String(item.json.error ?? ''))).toEqual([
			expect.stringMatching(/kept changing/),
			expect.stringMatching(/kept changing/),
		]);
		expect(sandbox.requests().filter((r) => r.method === 'POST')).toEqual([]);
		expect(sandbox.store.leads.size).toBeLessThan(before);
	});

	it('a list that moved by exactly a page between two reads is not taken for a server ignoring paging', async () => {
		// Page 2 then holds what page 1 held: the same ids a server ignoring `page` would send.
		const r = await walk(3, [{ insert: 3 }], 3);
		expect(r.error).toBeUndefined();
		// The three that were there all along; the three that arrived at the front after page 1 need not be.
		expect(r.missing).toEqual([]);
		expect(new Set(r.got).size).toBe(r.got.length);
	});

	it('nothing changes: 300 leads in 4 requests, pages 1 to 4 once each', async () => {
		const r = await walk(300, []);
		expect(r.error).toBeUndefined();
		expect(r.got).toHaveLength(300);
		expect(r.pages).toEqual([1, 2, 3, 4]);
	});
});
