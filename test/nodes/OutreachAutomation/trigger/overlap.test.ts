/**
 * Polls of one trigger that overlap in this process, as n8n 2.x starts them when a poll lasts longer
 * than its interval: run by n8n's own PollContext against the sandbox. A poll that starts while
 * another of the same trigger runs emits nothing and reads nothing; every message is emitted once.
 * Start points are counted in answered requests of the running poll, never in time.
 */
import type { IDataObject, INodeParameters } from 'n8n-workflow';
import { NodeApiError } from 'n8n-workflow';

import { TriggerHarness } from '../../../engine/harness';
import { startSandbox, type Sandbox } from '../../../sandbox/server';
import { VARIANTS, withPollBudget } from './budget';

const KEY = 'overlap-key-3e9a';
const SEED = { leads: 10, campaigns: 2, messages: 30 };
const ids = (items: IDataObject[]) => items.map((item) => item.id as string);
const tick = async () => await new Promise((resolve) => setTimeout(resolve, 1));

describe.each(VARIANTS)(
	'Overlapping polls, list $order first, timestamps: $timestamps',
	(variant) => {
		let sandbox: Sandbox;
		let creds: { baseUrl: string; apiKey: string };

		beforeAll(async () => {
			sandbox = await startSandbox({ apiKeys: [KEY], seed: SEED, ...variant, rateLimit: 1e6 });
			creds = { baseUrl: sandbox.url, apiKey: KEY };
		});
		beforeEach(() => sandbox.reset(SEED));
		afterAll(async () => sandbox.stop());

		const activated = async () => {
			const h = new TriggerHarness(creds, {});
			expect(await h.poll()).toEqual([]);
			return h;
		};
		/** Resolves once `count` requests sent since `since` have been answered, or `done()` holds. */
		const answered = async (since: number, count: number, done = () => false) => {
			while (sandbox.requests(since).filter((r) => r.status !== null).length < count && !done())
				await tick();
		};

		it.each([0, 1, 2, 4])(
			'a second poll started after %i answers of the first emits nothing and sends nothing; 400 new messages come once',
			async (offset) => {
				const h = await activated();
				const inserted = sandbox.insertMessages({ count: 400 }).ids;
				// Slow enough that the first poll is still reading when the second starts.
				sandbox.config({ latencyMs: 10 });
				const since = sandbox.requests().length;
				const first = h.poll();
				await answered(since, offset);
				const sentBefore = sandbox.requests().length;
				const second = await h.poll();
				const sentDuring = sandbox.requests(sentBefore).length;
				const firstIds = ids(await first);
				sandbox.config({ latencyMs: 0 });
				expect(second).toEqual([]);
				// Only the first poll's own requests went out while the second ran (at most one in flight).
				expect(sentDuring).toBeLessThanOrEqual(1);
				expect(firstIds).toEqual(inserted);
				// The next poll, alone, goes on from the first one's state: nothing new, one request.
				const since2 = sandbox.requests().length;
				expect(await h.poll()).toEqual([]);
				expect(sandbox.requests(since2)).toHaveLength(1);
			},
		);

		it('polls started every 2 answers over a backlog larger than one poll: each message once, all of them', async () => {
			const h = await activated();
			const inserted = sandbox.insertMessages({ count: 1200 }).ids;
			sandbox.config({ latencyMs: 5 });
			const emitted: string[] = [];
			let skipped = 0;
			let running = 0;
			const polls: Array<Promise<void>> = [];
			const start = () => {
				const overlapping = running > 0;
				running++;
				polls.push(
					h.poll().then((items) => {
						running--;
						if (overlapping) {
							expect(items).toEqual([]);
							skipped++;
						}
						emitted.push(...ids(items));
					}),
				);
			};
			// A scheduler firing faster than polls last, until the backlog is drained; each poll's budget
			// is over at once, so it reads the fewest pages a poll may (a backlog of many polls).
			await withPollBudget(1, async () => {
				for (let round = 0; round < 400 && emitted.length < inserted.length; round++) {
					const since = sandbox.requests().length;
					start();
					await answered(since, 2, () => running === 0);
				}
				await Promise.all(polls);
			});
			sandbox.config({ latencyMs: 0 });
			// A drain left unfinished by the last poll is finished by polls that do not overlap.
			for (let i = 0; i < 20 && (h.state().drain !== undefined || i === 0); i++)
				emitted.push(...ids(await h.poll()));
			expect(skipped).toBeGreaterThan(0);
			// A drain emits the newest first read first, then the older ones poll by poll.
			expect(new Set(emitted).size).toBe(emitted.length);
			expect([...emitted].sort()).toEqual([...inserted].sort());
			expect(await h.poll()).toEqual([]);
		});

		it('the running poll fails: the one that overlapped emitted nothing, and the next poll emits every message once', async () => {
			const h = await activated();
			const inserted = sandbox.insertMessages({ count: 400 }).ids;
			sandbox.config({ latencyMs: 10 });
			// The first poll's third page read answers a body that is not the API's: not repeated, it fails.
			sandbox.addFault({ method: 'GET', path: '/api/v1/messages', kind: 'malformed', skip: 2 });
			const since = sandbox.requests().length;
			const first = h.poll().catch((error: unknown) => error);
			await answered(since, 1);
			expect(await h.poll()).toEqual([]);
			const failure = await first;
			sandbox.config({ latencyMs: 0 });
			expect(failure).toBeInstanceOf(NodeApiError);
			expect(sandbox.requests(since).filter((r) => r.fault !== undefined)).toHaveLength(1);
			expect(ids(await h.poll())).toEqual(inserted);
			expect(await h.poll()).toEqual([]);
		});

		/**
		 * n8n 2.41's durable cursors: each poll loads its own copy of the committed state, and what the poll
		 * leaves is committed only after it returned (with its execution when it emitted, alone when it
		 * emitted nothing but changed it), in the order the polls returned. A poll can load the state
		 * before the previous poll's commit lands.
		 */
		let workflows = 0;
		const durable = (parameters: INodeParameters = {}) => {
			// A workflow of its own: what polls of other tests left is not this trigger's.
			const workflowId = `wf-trigger-durable-${++workflows}`;
			let saved: IDataObject = {};
			const delivered: string[] = [];
			return {
				delivered,
				saved: () => saved,
				load: () => JSON.parse(JSON.stringify(saved)) as IDataObject,
				/** A scheduled poll ('update'), or the one n8n runs at publishing ('activate'). */
				poll: async (loaded: IDataObject, activation: 'activate' | 'update' = 'update') => {
					const copy = new TriggerHarness(creds, parameters);
					copy.workflow.id = workflowId;
					Object.assign(copy.workflow.getStaticData('node', copy.node), loaded);
					const items = ids(await copy.poll('trigger', activation));
					const state = copy.state();
					const changed = JSON.stringify(state) !== JSON.stringify(loaded);
					return { items, state, commit: items.length > 0 || changed };
				},
				/** The poll's commit lands: its state saved, its items delivered with their execution. */
				commit: (result: { items: string[]; state: IDataObject; commit: boolean }) => {
					if (!result.commit) return;
					saved = result.state;
					delivered.push(...result.items);
				},
			};
		};

		it("n8n's durable scheduler: a poll that loads the state an emitting poll started from, before n8n saved that poll's, emits nothing", async () => {
			const n8n = durable();
			n8n.commit(await n8n.poll(n8n.load(), 'activate'));
			const before = n8n.load();
			const inserted = sandbox.insertMessages({ count: 150 }).ids;
			const first = await n8n.poll(before);
			expect(first.items).toEqual(inserted);
			// Not saved yet: a poll from the same old state sends nothing, emits nothing, changes nothing.
			const since = sandbox.requests().length;
			const held = await n8n.poll(before);
			expect(held).toEqual({ items: [], state: before, commit: false });
			expect(sandbox.requests(since)).toHaveLength(0);
			n8n.commit(first);
			// Saved: the next poll goes on from it.
			const more = sandbox.insertMessages({ count: 5 }).ids;
			n8n.commit(await n8n.poll(n8n.load()));
			expect(n8n.delivered).toEqual([...inserted, ...more]);
			// A state no poll of it moved on from (the trigger activated afresh) is not held back.
			const since2 = sandbox.requests().length;
			expect((await n8n.poll({}, 'activate')).items).toEqual([]);
			expect(sandbox.requests(since2).length).toBeGreaterThan(0);
		});

		it("n8n's durable scheduler: a poll that loaded the state before the previous poll's commit (which emitted nothing) landed loses nothing that arrived meanwhile", async () => {
			const n8n = durable();
			// The first poll after activation and the next one both load the new trigger's empty state.
			const firstLoad = n8n.load();
			const nextLoad = n8n.load();
			const first = await n8n.poll(firstLoad, 'activate');
			expect(first.items).toEqual([]);
			expect(first.commit).toBe(true);
			// Messages arrive after the first poll noted where the list stood, before the next poll reads.
			const inserted = sandbox.insertMessages({ count: 150 }).ids;
			const next = await n8n.poll(nextLoad);
			n8n.commit(first);
			n8n.commit(next);
			for (let i = 0; i < 3; i++) n8n.commit(await n8n.poll(n8n.load()));
			expect(n8n.delivered).toEqual(inserted);
		});

		it("n8n's durable scheduler with Emit Existing: a poll that loaded the new trigger's state before the first poll's commit landed emits nothing again", async () => {
			const n8n = durable({ options: { emitExisting: true } });
			const existing = sandbox.store.findMessages({}).map((message) => message.id);
			const firstLoad = n8n.load();
			const nextLoad = n8n.load();
			const first = await n8n.poll(firstLoad, 'activate');
			expect([...first.items].sort()).toEqual([...existing].sort());
			const since = sandbox.requests().length;
			const next = await n8n.poll(nextLoad);
			expect(next.items).toEqual([]);
			expect(sandbox.requests(since)).toHaveLength(0);
			n8n.commit(first);
			n8n.commit(next);
			const inserted = sandbox.insertMessages({ count: 5 }).ids;
			n8n.commit(await n8n.poll(n8n.load()));
			expect(n8n.delivered).toEqual([...first.items, ...inserted]);
		});

		it('another trigger (another workflow, or another node) is not held back', async () => {
			const a = await activated();
			const b = await activated();
			b.workflow.id = 'wf-trigger-other';
			const inserted = sandbox.insertMessages({ count: 150 }).ids;
			sandbox.config({ latencyMs: 10 });
			const [fromA, fromB] = await Promise.all([a.poll(), b.poll()]);
			sandbox.config({ latencyMs: 0 });
			expect(ids(fromA)).toEqual(inserted);
			expect(ids(fromB)).toEqual(inserted);
		});

		it('the manual test event is never held back by a running poll', async () => {
			const h = await activated();
			const inserted = sandbox.insertMessages({ count: 300 }).ids;
			sandbox.config({ latencyMs: 10 });
			const since = sandbox.requests().length;
			const scheduled = h.poll();
			await answered(since, 1);
			const manual = await h.poll('manual');
			expect(ids(await scheduled)).toEqual(inserted);
			sandbox.config({ latencyMs: 0 });
			expect(ids(manual)).toEqual([inserted[inserted.length - 1]]);
		});
	},
);
