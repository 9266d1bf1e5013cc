/**
 * The polling trigger, run by n8n's own PollContext against the sandbox over real HTTP, in both list
 * orders and with and without timestamps. Everything is asserted by ids and request counts, never by time.
 */
import type { IDataObject, INodeParameters } from 'n8n-workflow';
import { NodeApiError } from 'n8n-workflow';

import { MAX_REMEMBERED_IDS } from '../../../nodes/OutreachAutomation/trigger/state';
import { TriggerHarness } from '../../engine/harness';
import { startSandbox, type Sandbox } from '../../sandbox/server';
import { VARIANTS, withPollBudget } from './trigger/budget';

const KEY = 'trigger-key-5d1c';
const rl = (value: string) => ({ __rl: true, mode: 'id', value });
/** A small world: 20 leads in 3 campaigns, 30 messages spread over the last 30 days (one page). */
const SEED = { leads: 20, campaigns: 3, messages: 30 };
/** The sandbox's own timestamp precision: whole seconds. */
const thisSecond = () => `${new Date().toISOString().slice(0, 19)}Z`;
const ids = (items: IDataObject[]) => items.map((item) => item.id as string);

describe.each(VARIANTS)(
	'Outreach Automation Trigger, list $order first, timestamps: $timestamps',
	({ order, timestamps }) => {
		let sandbox: Sandbox;
		let creds: { baseUrl: string; apiKey: string };

		beforeAll(async () => {
			// A rate limit out of the way: these tests count requests, the pipeline's own tests cover pacing.
			sandbox = await startSandbox({
				apiKeys: [KEY],
				seed: SEED,
				order,
				timestamps,
				rateLimit: 1_000_000,
			});
			creds = { baseUrl: sandbox.url, apiKey: KEY };
		});
		beforeEach(() => sandbox.reset(SEED));
		afterAll(async () => sandbox.stop());

		const trigger = (parameters: INodeParameters = {}) => new TriggerHarness(creds, parameters);
		/** Requests logged so far; `sentSince(n)` are the ones after. */
		const sent = () => sandbox.requests().length;
		const sentSince = (since: number) => sandbox.requests(since);
		/** All message ids in creation order (the sandbox's ids and list positions follow it). */
		const allIds = () => sandbox.store.findMessages({}).map((m) => m.id);
		/** Polls once and returns the ids emitted and the requests it cost. */
		const pollCounting = async (h: TriggerHarness) => {
			const since = sent();
			const items = await h.poll();
			return { ids: ids(items), items, requests: sentSince(since) };
		};
		const activate = async (h: TriggerHarness) => {
			const first = await pollCounting(h);
			expect(first.ids).toEqual([]);
			return first;
		};

		it('first activation emits nothing, and the poll after it emits nothing either', async () => {
			const h = trigger();
			const first = await activate(h);
			// One page here: one request.
			expect(first.requests.length).toBe(1);
			const state = h.state();
			expect(state.filterKey).toEqual(expect.any(String));
			expect(state.seen).toEqual(expect.arrayContaining(allIds()));
			expect(await h.poll()).toEqual([]);
		});

		it('one simulated reply emits exactly one item, once', async () => {
			const h = trigger();
			await activate(h);
			const lead = sandbox.store.findMessages({})[0].lead_id;
			const reply = sandbox.reply({ lead_id: lead, body: 'Sounds good, call me tomorrow' });
			const { items } = await pollCounting(h);
			expect(items).toHaveLength(1);
			expect(items[0]).toMatchObject({
				id: reply.id,
				lead_id: lead,
				direction: 'inbound',
				status: 'received',
			});
			expect(await h.poll()).toEqual([]);
		});

		it('250 new messages across pages: 250 distinct items, oldest first, then an idle poll', async () => {
			const h = trigger();
			await activate(h);
			const { ids: inserted } = sandbox.insertMessages({ count: 250 });
			const poll = await pollCounting(h);
			expect(poll.ids).toEqual(inserted);
			expect(new Set(poll.ids).size).toBe(250);
			// 280 messages = 3 pages of 100. A page first read while looking for the far end (oldest
			// first, or the order still to learn) is read once more when the walk reaches it: the list
			// may have shifted in between.
			const reads = order === 'newest' && timestamps ? 3 : 4;
			expect(poll.requests.map((r) => [r.path, r.query.per_page])).toEqual(
				Array(reads).fill(['/api/v1/messages', '100']),
			);
			expect(new Set(poll.requests.map((r) => r.query.page)).size).toBe(3);
			const idle = await pollCounting(h);
			expect(idle.ids).toEqual([]);
			expect(idle.requests).toHaveLength(1);
		});

		it('messages sharing one created_at, before activation and across polls and pages: none lost, none repeated', async () => {
			const at = thisSecond();
			sandbox.insertMessages({ count: 5, created_at: at });
			const h = trigger();
			await activate(h);
			const emitted: string[] = [];
			for (const count of [3, 4, 150]) {
				const batch = sandbox.insertMessages({ count, created_at: at }).ids;
				const poll = await pollCounting(h);
				expect(poll.ids).toEqual(batch);
				emitted.push(...poll.ids);
			}
			// One more at that second plus a reply at whatever second it is now.
			const last = sandbox.insertMessages({ count: 1, created_at: at }).ids;
			const reply = sandbox.reply();
			expect((await pollCounting(h)).ids).toEqual([...last, reply.id]);
			emitted.push(...last, reply.id);
			expect(new Set(emitted).size).toBe(3 + 4 + 150 + 1 + 1);
			expect(await h.poll()).toEqual([]);
			// They really tie (the reply may share the second too).
			if (timestamps)
				expect(
					sandbox.store.findMessages({}).filter((m) => m.created_at === at).length,
				).toBeGreaterThanOrEqual(163);
		});

		it('an idle poll sends exactly one request, every time', async () => {
			const h = trigger();
			await activate(h);
			sandbox.insertMessages({ count: 120 });
			await h.poll();
			for (let i = 0; i < 3; i++) {
				const idle = await pollCounting(h);
				expect(idle.ids).toEqual([]);
				expect(idle.requests).toHaveLength(1);
			}
		});

		it('a 500 on page 2 (past the retries) fails the poll, emits nothing, moves no state; the next poll catches up', async () => {
			const h = trigger();
			await activate(h);
			const { ids: inserted } = sandbox.insertMessages({ count: 250 });
			const before = h.state();
			// 1 try + 3 retries, all 500: the pipeline gives up and the poll fails.
			sandbox.addFault({
				method: 'GET',
				path: '/api/v1/messages',
				query: { page: '2' },
				status: 500,
				times: 4,
			});
			const since = sent();
			const failure = await h.poll().catch((error: unknown) => error);
			expect(failure).toBeInstanceOf(NodeApiError);
			expect((failure as NodeApiError).message).toBe(
				'The Outreach Automation service is unavailable (HTTP 500)',
			);
			expect(
				sentSince(since)
					.filter((r) => r.query.page === '2')
					.map((r) => r.status),
			).toEqual([500, 500, 500, 500]);
			expect(h.state()).toEqual(before);

			const caughtUp = await pollCounting(h);
			expect(caughtUp.ids).toEqual(inserted);
			expect(await h.poll()).toEqual([]);
		});

		it("a backlog longer than n8n's poll budget is drained over several polls: each message once, oldest first within each poll", async () => {
			const h = trigger();
			await activate(h);
			const { ids: inserted } = sandbox.insertMessages({ count: 950 });
			// Every answer takes 20 ms and the budget is 1 ms: each poll gets its minimum of requests.
			sandbox.config({ latencyMs: 20 });
			const since = sent();
			const emitted: string[] = [];
			let polls = 0;
			while (emitted.length < inserted.length && polls < 40) {
				const batch = ids(await withPollBudget(1, async () => await h.poll()));
				polls++;
				// Within each poll, oldest first.
				expect(batch).toEqual([...batch].sort((a, b) => inserted.indexOf(a) - inserted.indexOf(b)));
				emitted.push(...batch);
			}
			sandbox.config({ latencyMs: 0 });
			expect(new Set(emitted).size).toBe(emitted.length);
			expect([...emitted].sort()).toEqual([...inserted].sort());
			expect(polls).toBeGreaterThan(1);
			// Never starting over: about one request per page of the backlog, plus a little per poll.
			expect(sentSince(since).length).toBeLessThanOrEqual(Math.ceil(980 / 100) + 2 * polls + 2);
			expect(h.state().drain).toBeUndefined();
			const idle = await pollCounting(h);
			expect(idle.ids).toEqual([]);
			expect(idle.requests).toHaveLength(1);
		});

		it('messages arriving while a poll pages through the list are each emitted once', async () => {
			const h = trigger();
			await activate(h);
			const { ids: before } = sandbox.insertMessages({ count: 250 });
			// Slow answers, and 30 more messages as soon as the first page of the poll has been answered.
			sandbox.config({ latencyMs: 40 });
			const start = sent();
			let during: string[] = [];
			const watcher = (async () => {
				while (!sentSince(start).some((r) => r.status !== null))
					await new Promise((r) => setTimeout(r, 2));
				during = sandbox.insertMessages({ count: 30 }).ids;
			})();
			const first = await h.poll();
			await watcher;
			sandbox.config({ latencyMs: 0 });
			const second = await h.poll();
			const all = [...ids(first), ...ids(second)];
			expect(new Set(all).size).toBe(all.length);
			expect(all.sort()).toEqual([...before, ...during].sort());
			expect(ids(first).slice(0, 250)).toEqual(before);
		});

		it('filters by campaign, lead and status: only matching messages, and the filters reach the server', async () => {
			const [campaignA, campaignB] = [...sandbox.store.campaigns.keys()];
			const leadA = sandbox.store.addLead({ first_name: 'Ada', campaign_id: campaignA });
			const leadB = sandbox.store.addLead({ first_name: 'Bob', campaign_id: campaignB });
			const byCampaign = trigger({ filters: { campaignId: rl(campaignA), status: 'received' } });
			const byLead = trigger({ filters: { leadId: rl(leadB.id) } });
			// Two triggers: n8n tells them apart by workflow and node, and keeps one state for each.
			byLead.workflow.id = 'wf-trigger-by-lead';
			await activate(byCampaign);
			await activate(byLead);

			const wanted = sandbox.insertMessages({
				count: 3,
				lead_id: leadA.id,
				direction: 'inbound',
			}).ids;
			sandbox.insertMessages({ count: 2, lead_id: leadA.id, status: 'sent' });
			const ofB = sandbox.insertMessages({ count: 2, lead_id: leadB.id, direction: 'inbound' }).ids;
			const reply = sandbox.reply({ lead_id: leadA.id });

			const campaignPoll = await pollCounting(byCampaign);
			expect(campaignPoll.ids).toEqual([...wanted, reply.id]);
			expect(
				campaignPoll.items.every((m) => m.campaign_id === campaignA && m.status === 'received'),
			).toBe(true);
			expect(campaignPoll.requests.map((r) => r.query)).toEqual([
				expect.objectContaining({ campaign_id: campaignA, status: 'received' }),
			]);
			expect(campaignPoll.requests[0].query).not.toHaveProperty('lead_id');

			const leadPoll = await pollCounting(byLead);
			expect(leadPoll.ids).toEqual(ofB);
			expect(
				leadPoll.requests.every((r) => r.query.lead_id === leadB.id && !('campaign_id' in r.query)),
			).toBe(true);
			expect(await byCampaign.poll()).toEqual([]);
			expect(await byLead.poll()).toEqual([]);
		});

		it('an older message entering a Status filter mid-list is not taken for new, nor for a sign of the list order', async () => {
			sandbox.reset({ ...SEED, messages: 0 });
			sandbox.insertMessages({ count: 100, status: 'delivered' });
			const [entering] = sandbox.insertMessages({ count: 1, status: 'sent' }).ids;
			sandbox.insertMessages({ count: 150, status: 'delivered' });
			const h = trigger({ filters: { status: 'delivered' } });
			await activate(h);
			sandbox.store.getMessage(entering)!.status = 'delivered';
			expect(await h.poll()).toEqual([]);
			const fresh = sandbox.insertMessages({ count: 3, status: 'delivered' }).ids;
			expect((await pollCounting(h)).ids).toEqual(fresh);
			const idle = await pollCounting(h);
			expect(idle.ids).toEqual([]);
			expect(idle.requests).toHaveLength(1);
		});

		it('a lead with no messages yet, then several at once: emitted oldest first', async () => {
			// Nothing known to tell the list order by: the trigger must still put the oldest first.
			const lead = sandbox.store.addLead({ first_name: 'New' });
			const h = trigger({ filters: { leadId: rl(lead.id) } });
			await activate(h);
			const batch = sandbox.insertMessages({
				count: 4,
				lead_id: lead.id,
				created_at: thisSecond(),
			}).ids;
			expect((await pollCounting(h)).ids).toEqual(batch);
			const next = sandbox.insertMessages({
				count: 3,
				lead_id: lead.id,
				created_at: thisSecond(),
			}).ids;
			expect((await pollCounting(h)).ids).toEqual(next);
		});

		it('Emit Existing Messages on First Run: every existing message once, oldest first, then only new ones', async () => {
			const h = trigger({ options: { emitExisting: true } });
			const first = await pollCounting(h);
			expect(first.ids).toEqual(allIds());
			expect(first.requests).toHaveLength(1);
			expect(await h.poll()).toEqual([]);
			const { ids: more } = sandbox.insertMessages({ count: 3 });
			expect((await pollCounting(h)).ids).toEqual(more);
		});

		it('Emit Existing with 1,200 existing messages (more than it remembers): each once, then only new ones', async () => {
			sandbox.reset({ ...SEED, messages: 1200 });
			const h = trigger({ options: { emitExisting: true } });
			const first = await pollCounting(h);
			expect(first.ids).toEqual(allIds());
			// 12 pages, and oldest first page 1 once more: read first to tell the order, it is stale
			// by the time the walk from the last page reaches it.
			expect(first.requests).toHaveLength(order === 'oldest' ? 13 : 12);
			const idle = await pollCounting(h);
			expect(idle.ids).toEqual([]);
			expect(idle.requests.length).toBeLessThanOrEqual(2);
			const { ids: more } = sandbox.insertMessages({ count: 5 });
			expect((await pollCounting(h)).ids).toEqual(more);
			expect(await h.poll()).toEqual([]);
		});

		it('manual mode returns the newest matching message and leaves the state alone', async () => {
			const h = trigger();
			// Before any activation: nothing known yet.
			const [newest] = await h.poll('manual');
			expect(newest.id).toBe(allIds().at(-1));
			expect(h.state()).toEqual({});

			await activate(h);
			const { ids: inserted } = sandbox.insertMessages({ count: 120 });
			const before = h.state();
			const since = sent();
			const manual = await h.poll('manual');
			expect(ids(manual)).toEqual([inserted.at(-1)]);
			expect(sentSince(since).length).toBeLessThanOrEqual(2);
			expect(h.state()).toEqual(before);
			// The messages fetched as a test event are still new to the activated trigger.
			expect((await pollCounting(h)).ids).toEqual(inserted);
		});

		it('manual mode with no matching message says so in plain words', async () => {
			const lead = sandbox.store.addLead({ first_name: 'Quiet' });
			const h = trigger({ filters: { leadId: rl(lead.id) } });
			const error = await h.poll('manual').catch((e: unknown) => e as Error);
			expect(error).toBeInstanceOf(Error);
			expect((error as Error).message).toBe('No message matches the trigger yet');
			expect(h.state()).toEqual({});
		});

		it('the static data stays within its bound after 10,000 messages over 10 polls', async () => {
			const h = trigger();
			await activate(h);
			let emitted = 0;
			const distinct = new Set<string>();
			for (let batch = 0; batch < 10; batch++) {
				const { ids: inserted } = sandbox.insertMessages({ count: 1000 });
				const poll = await pollCounting(h);
				expect(poll.ids).toEqual(inserted);
				// 1,000 new messages = 10 pages, plus the page holding the boundary when the pages do not line
				// up, read again when it was first read while looking for the far end.
				expect(poll.requests.length).toBeLessThanOrEqual(12);
				emitted += poll.ids.length;
				poll.ids.forEach((id) => distinct.add(id));
			}
			expect(emitted).toBe(10_000);
			expect(distinct.size).toBe(10_000);
			const state = h.state();
			const size = JSON.stringify(state).length;
			console.log(
				`trigger static data after 10,000 messages (${order} first, timestamps ${timestamps}): ${(state.seen as string[]).length} ids, ${size} bytes of JSON`,
			);
			expect((state.seen as string[]).length).toBeLessThanOrEqual(MAX_REMEMBERED_IDS);
			expect(size).toBeLessThan(20_000);
			expect((await pollCounting(h)).requests).toHaveLength(1);
		});

		it('when the server clamps per_page to 50, pages are 50 and nothing is lost or repeated', async () => {
			sandbox.config({ maxPerPage: 50 });
			const h = trigger();
			await activate(h);
			const { ids: inserted } = sandbox.insertMessages({ count: 130 });
			const poll = await pollCounting(h);
			expect(poll.ids).toEqual(inserted);
			// 160 messages in pages of 50, each read at most once: newest first stops on page 3 (the 30 old
			// ones start at #131), unless the order is still to be learned from the far end (no timestamps);
			// oldest first reads the old last page 1, then 4, 3, 2, and 1 again (its first copy predates
			// pages 4 to 2). It still asks for 100.
			expect(poll.requests).toHaveLength(
				order === 'newest' && timestamps ? 3 : order === 'newest' ? 4 : 5,
			);
			expect(new Set(poll.requests.map((r) => r.query.page)).size).toBe(
				order === 'newest' && timestamps ? 3 : 4,
			);
			expect(poll.requests.every((r) => r.query.per_page === '100')).toBe(true);
			expect(h.state()).toMatchObject({ perPage: 50, total: 160 });
			expect((await pollCounting(h)).requests).toHaveLength(1);

			// The clamp changes under a running trigger: still one request when idle once it has seen it.
			sandbox.config({ maxPerPage: 30 });
			const more = sandbox.insertMessages({ count: 40 }).ids;
			expect((await pollCounting(h)).ids).toEqual(more);
			expect(h.state()).toMatchObject({ perPage: 30 });
			expect((await pollCounting(h)).requests).toHaveLength(1);
		});

		it('changing the filters starts afresh: nothing emitted for the new filters at first, then only their messages', async () => {
			const [campaignA, campaignB] = [...sandbox.store.campaigns.keys()];
			const h = trigger({ filters: { campaignId: rl(campaignA) } });
			await activate(h);
			const ofA = sandbox.insertMessages({ count: 2, campaign_id: campaignA }).ids;
			expect((await pollCounting(h)).ids).toEqual(ofA);
			const keyA = h.state().filterKey;

			sandbox.insertMessages({ count: 2, campaign_id: campaignB });
			h.node.parameters = { filters: { campaignId: rl(campaignB) } };
			const fresh = await pollCounting(h);
			expect(fresh.ids).toEqual([]);
			expect(fresh.requests.every((r) => r.query.campaign_id === campaignB)).toBe(true);
			expect(h.state().filterKey).not.toBe(keyA);
			expect((h.state().seen as string[]).filter((id) => ofA.includes(id))).toEqual([]);

			sandbox.insertMessages({ count: 1, campaign_id: campaignA });
			const ofB = sandbox.insertMessages({ count: 3, campaign_id: campaignB }).ids;
			expect((await pollCounting(h)).ids).toEqual(ofB);
		});

		if (timestamps) {
			it('a message that arrives late with an older created_at is still emitted, and hides nothing behind it', async () => {
				const h = trigger();
				await activate(h);
				// The watermark is now.
				const first = sandbox.insertMessages({ count: 1 }).ids;
				expect((await pollCounting(h)).ids).toEqual(first);
				const early = sandbox.insertMessages({ count: 2 }).ids;
				// Synced late from the network: its own date is an hour old, newer ones come after it.
				const late = sandbox.insertMessages({
					count: 1,
					created_at: new Date(Date.now() - 3_600_000).toISOString(),
				}).ids;
				const after = sandbox.insertMessages({ count: 2 }).ids;
				expect((await pollCounting(h)).ids).toEqual([...early, ...late, ...after]);
				const alone = sandbox.insertMessages({
					count: 1,
					created_at: new Date(Date.now() - 7_200_000).toISOString(),
				}).ids;
				expect((await pollCounting(h)).ids).toEqual(alone);
				expect((await pollCounting(h)).requests).toHaveLength(1);
			});

			it('when every remembered message leaves a status filter, older messages entering it are not taken for new', async () => {
				sandbox.reset({ ...SEED, messages: 0 });
				const hoursAgo = (h: number) => new Date(Date.now() - h * 3_600_000).toISOString();
				const older = sandbox.insertMessages({
					count: 120,
					status: 'sent',
					created_at: hoursAgo(2),
				}).ids;
				const remembered = sandbox.insertMessages({
					count: 5,
					status: 'delivered',
					created_at: hoursAgo(1),
				}).ids;
				const h = trigger({ filters: { status: 'delivered' } });
				await activate(h);
				expect(h.state().seen).toEqual(expect.arrayContaining(remembered));
				// The remembered ones are read, and the older ones are delivered at last.
				for (const m of sandbox.store.findMessages({}))
					m.status = m.status === 'delivered' ? 'read' : 'delivered';
				const fresh = sandbox.insertMessages({ count: 3, status: 'delivered' }).ids;
				const poll = await pollCounting(h);
				expect(poll.ids).toEqual(fresh);
				expect(poll.ids).not.toEqual(expect.arrayContaining([older[0]]));
				// Noted, not emitted: the next poll is idle again.
				const idle = await pollCounting(h);
				expect(idle.ids).toEqual([]);
				expect(idle.requests).toHaveLength(1);
			});
		}
	},
);

describe('Outreach Automation Trigger errors', () => {
	let sandbox: Sandbox;

	beforeAll(async () => {
		sandbox = await startSandbox({ apiKeys: [KEY], seed: SEED, rateLimit: 1_000_000 });
	});
	afterAll(async () => sandbox.stop());

	it('a refused API key (401) is a NodeApiError saying to check the key, and moves no state', async () => {
		const h = new TriggerHarness({ baseUrl: sandbox.url, apiKey: 'revoked-key-0000' }, {});
		for (const mode of ['trigger', 'manual'] as const) {
			const error = await h.poll(mode).catch((e: unknown) => e);
			expect(error).toBeInstanceOf(NodeApiError);
			expect((error as NodeApiError).httpCode).toBe('401');
			expect((error as NodeApiError).message).toBe(
				'The Outreach Automation API refused the API key (HTTP 401): check the API key in the credential',
			);
			expect(JSON.stringify(error)).not.toContain('revoked-key-0000');
		}
		expect(h.state()).toEqual({});
		// A single request each: a 401 is not retried.
		expect(sandbox.requests().filter((r) => r.status === 401)).toHaveLength(2);
	});

	it('a server that ignores `page` fails the poll with the paging error, emits nothing and moves no state', async () => {
		sandbox.reset({ leads: 5, campaigns: 1, messages: 250 });
		const h = new TriggerHarness(
			{ baseUrl: sandbox.url, apiKey: KEY },
			{ options: { emitExisting: true } },
		);
		sandbox.config({ ignorePage: true });
		try {
			const error = await h.poll().catch((e: unknown) => e);
			expect(error).toBeInstanceOf(NodeApiError);
			expect((error as NodeApiError).message).toMatch(/ignore paging/);
			expect((error as NodeApiError).description).toMatch(
				/Nothing was emitted; the next poll tries again\.$/,
			);
			expect(h.state()).toEqual({});
		} finally {
			sandbox.config({ ignorePage: false });
		}
	});
});
