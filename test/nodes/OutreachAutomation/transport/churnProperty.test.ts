/**
 * Properties of the one list reader over random churn schedules: whatever leaves or arrives between
 * its page reads (removals anywhere, creations at the front, as a newest-first list gets them), every
 * item present for the whole walk is returned once, or the walk fails saying the list kept changing.
 * Thousands of schedules against an in-process list (walkList, the reader's own walk), and some hundreds
 * through n8n's engine against the sandbox: Get Many, and Create or Update (no profile created twice).
 */
import fc from 'fast-check';
import type { IDataObject } from 'n8n-workflow';

import { resetLearntSearch } from '../../../../nodes/OutreachAutomation/resources/leadUpsert';
import { resetRateLimitState } from '../../../../nodes/OutreachAutomation/transport/pacing';
import { walkList, type ListSource } from '../../../../nodes/OutreachAutomation/transport/listWalk';
import { resetPageSizes } from '../../../../nodes/OutreachAutomation/transport/pages';
import { runNode } from '../../../engine/harness';
import { startSandbox, type Sandbox } from '../../../sandbox/server';

/** Between two reads: removals at these places (fractions of the list) and creations at the front. */
interface Change {
	removals: number[];
	creations: number;
}

const change = fc.record({
	removals: fc.array(fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), {
		maxLength: 4,
	}),
	creations: fc.integer({ min: 0, max: 3 }),
});

class Changing extends Error {}

/** A newest-first list served `perPage` at a time, with `schedule[k]` applied right after read k + 1. */
function fakeList(n: number, perPage: number, schedule: Change[]) {
	let next = n;
	let list = Array.from({ length: n }, (_, i) => `id${n - 1 - i}`);
	const left = new Set<string>();
	let reads = 0;
	const source: ListSource = {
		page: async (number, size) => {
			const served = Math.min(size, perPage);
			const items = list
				.slice((number - 1) * served, number * served)
				.map((id): IDataObject => ({ id }));
			const page = { items, total: list.length, perPage: served, size };
			const due = schedule[reads++];
			if (due) {
				const gone = new Set(due.removals.map((f) => list[Math.floor(f * list.length)]));
				for (const id of gone) if (id !== undefined) left.add(id);
				list = list.filter((id) => !gone.has(id));
				for (let i = 0; i < due.creations; i++) list.unshift(`id${next++}`);
			}
			return page;
		},
		remember: () => undefined,
		tooLong: () => new Error('too long'),
		pagingIgnored: () => new Error('paging ignored'),
		changing: () => new Changing('kept changing'),
	};
	const original = list.slice();
	return { source, stayed: () => original.filter((id) => !left.has(id)), reads: () => reads };
}

describe('the list reader over random churn schedules (in process)', () => {
	it('every item that stayed is returned once, or the walk says the list kept changing', async () => {
		let failed = 0;
		let runs = 0;
		await fc.assert(
			fc.asyncProperty(
				fc.integer({ min: 0, max: 90 }),
				fc.integer({ min: 1, max: 12 }),
				fc.array(fc.option(change, { nil: undefined }), { maxLength: 30 }),
				async (n, perPage, schedule) => {
					runs++;
					const fake = fakeList(n, perPage, schedule as Change[]);
					let got: IDataObject[];
					try {
						got = await walkList(fake.source, 1000);
					} catch (error) {
						if (!(error instanceof Changing)) throw error;
						failed++;
						return;
					}
					const ids = got.map((item) => String(item.id));
					expect(new Set(ids).size).toBe(ids.length);
					const returned = new Set(ids);
					expect(fake.stayed().filter((id) => !returned.has(id))).toEqual([]);
				},
			),
			{ numRuns: 5000, seed: 64 },
		);
		// A list changing at almost every read may not be readable at all; these mostly are.
		expect(failed).toBeLessThan(runs / 20);
	});

	it('nothing changes: the fewest requests (a full last page needs the empty one after it)', async () => {
		await fc.assert(
			fc.asyncProperty(
				fc.integer({ min: 0, max: 500 }),
				fc.integer({ min: 1, max: 50 }),
				async (n, perPage) => {
					const fake = fakeList(n, perPage, []);
					const got = await walkList(fake.source, 1000);
					expect(got).toHaveLength(n);
					expect(fake.reads()).toBe(n < perPage ? 1 : Math.floor(n / perPage) + 1);
				},
			),
			{ numRuns: 2000, seed: 64 },
		);
	});
});

/** A schedule of sandbox churn events: removals placed on either side of the reader, creations. */
const churnEvent = fc.record({
	removeBefore: fc.integer({ min: 0, max: 2 }),
	removeAfter: fc.integer({ min: 0, max: 2 }),
	insert: fc.integer({ min: 0, max: 2 }),
});
const schedule = fc.array(fc.option(churnEvent, { nil: undefined }), { maxLength: 12 });

type Placed = { removeBefore: number; removeAfter: number; insert: number };

function queue(sandbox: Sandbox, events: Array<Placed | undefined>) {
	events.forEach((event, k) => {
		if (event && event.removeBefore + event.removeAfter + event.insert > 0)
			sandbox.addChurn({ after: k + 1, resource: 'leads', ...event });
	});
}

describe('the list reader over random churn schedules (n8n engine, sandbox)', () => {
	const KEY = 'churn-property-key-5e1a';
	let sandbox: Sandbox;
	let creds: { baseUrl: string; apiKey: string };

	beforeAll(async () => {
		sandbox = await startSandbox({
			apiKeys: [KEY],
			rateLimit: 100_000,
			seed: { leads: 0, campaigns: 0, messages: 0 },
		});
		creds = { baseUrl: sandbox.url, apiKey: KEY };
	});
	afterAll(async () => sandbox.stop());
	const fresh = (maxPerPage: number, seed: number) => {
		sandbox.reset({ leads: 0, campaigns: 0, messages: 0 });
		sandbox.config({ maxPerPage, faultSeed: seed });
		resetRateLimitState();
		resetPageSizes();
		resetLearntSearch();
	};
	const profile = (i: number) => `https://www.linkedin.com/in/churn-${i}-profile`;

	it('Lead > Get Many (Return All): every lead that stayed, once, or a clear error', async () => {
		await fc.assert(
			fc.asyncProperty(
				fc.integer({ min: 0, max: 60 }),
				fc.integer({ min: 3, max: 10 }),
				fc.integer({ min: 1, max: 1000 }),
				schedule,
				async (n, maxPerPage, seed, events) => {
					fresh(maxPerPage, seed);
					const ids = Array.from({ length: n }, (_, i) =>
						String(sandbox.store.addLead({ first_name: `L${i}` }).id),
					);
					queue(sandbox, events);
					const { items, error } = await runNode(creds, {
						resource: 'lead',
						operation: 'getAll',
						returnAll: true,
					});
					if (error) {
						expect(error.message).toMatch(/kept changing/);
						return;
					}
					const left = new Set(sandbox.churnLog().events.flatMap((e) => e.left));
					const got = items.map((item) => String(item.json.id));
					expect(new Set(got).size).toBe(got.length);
					const returned = new Set(got);
					expect(ids.filter((id) => !left.has(id) && !returned.has(id))).toEqual([]);
				},
			),
			{ numRuns: 250, seed: 64 },
		);
	}, 300_000);

	it('Lead > Create or Update: no profile is created twice', async () => {
		await fc.assert(
			fc.asyncProperty(
				fc.integer({ min: 2, max: 60 }),
				fc.integer({ min: 3, max: 8 }),
				fc.integer({ min: 1, max: 1000 }),
				schedule,
				async (n, maxPerPage, seed, events) => {
					fresh(maxPerPage, seed);
					for (let i = 0; i < n; i++)
						sandbox.store.addLead({ first_name: `P${i}`, linkedin_url: profile(i) });
					queue(sandbox, events);
					// Every stored profile again, and two new ones.
					const items = Array.from({ length: n + 2 }, (_, i) => ({
						url: profile(i),
						first: `P${i}`,
					}));
					await runNode(
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
					const count = new Map<string, number>();
					for (const lead of sandbox.store.leads.values())
						if (lead.linkedin_url)
							count.set(lead.linkedin_url, (count.get(lead.linkedin_url) ?? 0) + 1);
					expect([...count].filter(([, k]) => k > 1)).toEqual([]);
				},
			),
			{ numRuns: 300, seed: 64 },
		);
	}, 300_000);
});
