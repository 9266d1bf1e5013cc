/**
 * The trigger against servers that behave as the API allows but the happy path does not show: a
 * backlog longer than one poll's budget, a list that changes between page reads, `meta` missing or
 * wrong, a silent per_page clamp, another account behind the same workflow. Every check compares
 * ids emitted with the sandbox's own data, and counts requests, never time.
 */
import type { IDataObject } from 'n8n-workflow';

import {
	DEFAULT_POLL_BUDGET_MS,
	pollBudgetMs,
} from '../../../../nodes/OutreachAutomation/OutreachAutomationTrigger.node';
import { TriggerHarness } from '../../../engine/harness';
import { startSandbox, type Sandbox } from '../../../sandbox/server';
import { VARIANTS, withPollBudget } from './budget';

const KEY = 'backlog-key-81c2';
const SEED = { leads: 10, campaigns: 2, messages: 30 };
const ids = (items: IDataObject[]) => items.map((item) => item.id as string);
const sorted = (list: string[]) => [...list].sort();

describe.each(VARIANTS)(
	'Trigger backlog, list $order first, timestamps: $timestamps',
	(variant) => {
		let sandbox: Sandbox;
		let creds: { baseUrl: string; apiKey: string };

		beforeAll(async () => {
			sandbox = await startSandbox({ apiKeys: [KEY], seed: SEED, ...variant, rateLimit: 1e6 });
			creds = { baseUrl: sandbox.url, apiKey: KEY };
		});
		beforeEach(() => sandbox.reset(SEED));
		afterAll(async () => sandbox.stop());

		const activated = async (parameters = {}) => {
			const h = new TriggerHarness(creds, parameters);
			expect(await h.poll()).toEqual([]);
			return h;
		};
		/** Polls until a poll emits nothing and no drain is pending; every id emitted, in order. */
		const pollUntilIdle = async (h: TriggerHarness, budgetMs?: number) => {
			const emitted: string[] = [];
			for (let i = 0; i < 50; i++) {
				const poll = async () => await h.poll();
				const batch = ids(
					budgetMs === undefined ? await poll() : await withPollBudget(budgetMs, poll),
				);
				emitted.push(...batch);
				if (batch.length === 0 && h.state().drain === undefined) return emitted;
			}
			throw new Error('the trigger never became idle');
		};
		/** Runs `change` once the first request of the next poll has been answered. */
		const afterFirstAnswer = (change: () => void) => {
			const start = sandbox.requests().length;
			return (async () => {
				while (!sandbox.requests(start).some((r) => r.status !== null))
					await new Promise((r) => setTimeout(r, 1));
				change();
			})();
		};

		it('a message that leaves the list while a poll pages through it hides no other message', async () => {
			const h = await activated();
			const inserted = sandbox.insertMessages({ count: 250 }).ids;
			// Among the first page read (newest first: the newest; oldest first: the last page).
			const leaving = variant.order === 'newest' ? inserted.slice(-3) : inserted.slice(150, 153);
			sandbox.config({ latencyMs: 15 });
			const watcher = afterFirstAnswer(() =>
				leaving.forEach((id) => sandbox.store.removeMessage(id)),
			);
			const first = ids(await h.poll());
			await watcher;
			sandbox.config({ latencyMs: 0 });
			const all = [...first, ...(await pollUntilIdle(h))];
			expect(new Set(all).size).toBe(all.length);
			const stayed = inserted.filter((id) => !leaving.includes(id));
			expect(all.filter((id) => !leaving.includes(id))).toEqual(stayed);
		});

		it.each(['absent', 'string'] as const)(
			'meta.total %s: a backlog over several pages is emitted whole, each once',
			async (metaTotal) => {
				const h = await activated();
				sandbox.config({ metaTotal });
				const inserted = sandbox.insertMessages({ count: 250 }).ids;
				expect(await pollUntilIdle(h)).toEqual(inserted);
				const more = sandbox.insertMessages({ count: 7 }).ids;
				expect(await pollUntilIdle(h)).toEqual(more);
			},
		);

		it('a backlog larger than the ids it remembers, over several polls: each once, then idle polls cost 1 request', async () => {
			const h = await activated();
			const inserted = sandbox.insertMessages({ count: 2_500 }).ids;
			// A first poll cut short by its budget, then one that drains the rest, more than
			// MAX_REMEMBERED_IDS: the drain's own ids must not push the newest known ones out.
			const first = ids(await withPollBudget(1, async () => await h.poll()));
			expect(first.length).toBeLessThan(inserted.length - 1_000);
			const all = [...first, ...(await pollUntilIdle(h))];
			expect(all).toHaveLength(inserted.length);
			expect(new Set(all)).toEqual(new Set(inserted));
			for (let i = 0; i < 3; i++) {
				const idleSince = sandbox.requests().length;
				expect(await h.poll()).toEqual([]);
				expect(sandbox.requests(idleSince)).toHaveLength(1);
			}
		});

		it('a drain whose budget runs out on the last page of new messages: later idle polls cost 1 request', async () => {
			const h = await activated();
			// With a 1 ms budget every poll sends the minimum of 3 requests: the first reads 3 pages,
			// every later one reads page 1, its place again and one page more. 500 new messages end
			// exactly where such a poll's budget runs out.
			const inserted = sandbox.insertMessages({ count: 500 }).ids;
			const emitted: string[] = [];
			for (let i = 0; i < 10 && emitted.length < inserted.length; i++)
				emitted.push(...ids(await withPollBudget(1, async () => await h.scheduledPoll())));
			expect(emitted).toHaveLength(inserted.length);
			expect(new Set(emitted)).toEqual(new Set(inserted));
			for (let i = 0; i < 3; i++) {
				const idleSince = sandbox.requests().length;
				expect(await h.scheduledPoll()).toEqual([]);
				expect(sandbox.requests(idleSince)).toHaveLength(1);
			}
		});

		it('no meta at all: still every message once', async () => {
			sandbox.config({ metaStyle: 'absent' });
			const h = await activated();
			const inserted = sandbox.insertMessages({ count: 230 }).ids;
			expect(await pollUntilIdle(h)).toEqual(inserted);
		});

		it('a silent per_page clamp (meta.per_page echoes what was asked) loses nothing', async () => {
			sandbox.config({ maxPerPage: 50, metaPerPage: 'requested' });
			const h = await activated();
			const inserted = sandbox.insertMessages({ count: 180 }).ids;
			expect(await pollUntilIdle(h)).toEqual(inserted);
			const idleSince = sandbox.requests().length;
			expect(await h.poll()).toEqual([]);
			expect(sandbox.requests(idleSince).length).toBeLessThanOrEqual(2);
		});

		it('messages arriving during a long drain are each emitted once, and the drain never starts over', async () => {
			const h = await activated();
			const inserted = sandbox.insertMessages({ count: 600 }).ids;
			sandbox.config({ latencyMs: 10 });
			const since = sandbox.requests().length;
			const emitted: string[] = [];
			let drainingPolls = 0;
			for (let poll = 0; poll < 4; poll++) {
				const watcher = afterFirstAnswer(() =>
					inserted.push(...sandbox.insertMessages({ count: 5 }).ids),
				);
				emitted.push(...ids(await withPollBudget(1, async () => await h.poll())));
				await watcher;
				if (h.state().drain) drainingPolls++;
			}
			expect(drainingPolls).toBeGreaterThanOrEqual(2);
			sandbox.config({ latencyMs: 0 });
			emitted.push(...(await pollUntilIdle(h)));
			expect(new Set(emitted).size).toBe(emitted.length);
			expect(sorted(emitted)).toEqual(sorted(inserted));
			// 650 messages in pages of 100: a drain that started over would read far more.
			expect(sandbox.requests(since).length).toBeLessThanOrEqual(30);
		});

		it('a corrupt saved state is reset like a first activation, not a crash', async () => {
			const h = new TriggerHarness(creds, {});
			Object.assign(h.workflow.getStaticData('node', h.node), { seen: 'not a list', drain: 5 });
			expect(await h.poll()).toEqual([]);
			expect(Array.isArray(h.state().seen)).toBe(true);
			const more = sandbox.insertMessages({ count: 3 }).ids;
			expect(ids(await h.poll())).toEqual(more);
		});

		it('the saved state stays small while a 5,000-message backlog drains', async () => {
			const h = await activated();
			const inserted = sandbox.insertMessages({ count: 5000 }).ids;
			let largest = 0;
			const emitted: string[] = [];
			for (let i = 0; i < 200; i++) {
				const batch = ids(await withPollBudget(1, async () => await h.poll()));
				emitted.push(...batch);
				largest = Math.max(largest, JSON.stringify(h.state()).length);
				if (batch.length === 0 && h.state().drain === undefined) break;
			}
			expect(sorted(emitted)).toEqual(sorted(inserted));
			console.log(
				`trigger state while draining 5,000 messages (${variant.order} first, timestamps ${variant.timestamps}): at most ${largest} bytes of JSON`,
			);
			expect(largest).toBeLessThan(32_000);
		});
	},
);

describe('Trigger state belongs to one account', () => {
	let a: Sandbox;
	let b: Sandbox;

	beforeAll(async () => {
		a = await startSandbox({ apiKeys: [KEY, 'other-key-0b7e'], seed: SEED, rateLimit: 1e6 });
		b = await startSandbox({ apiKeys: [KEY], seed: { ...SEED, messages: 120 }, rateLimit: 1e6 });
	});
	afterAll(async () => Promise.all([a.stop(), b.stop()]));

	it('switching the credential to another account (Base URL) starts afresh: none of its old messages is emitted', async () => {
		const h = new TriggerHarness({ baseUrl: a.url, apiKey: KEY }, {});
		expect(await h.poll()).toEqual([]);
		const account = h.state().account;
		expect(account).toEqual(expect.any(String));
		expect(JSON.stringify(h.state())).not.toContain(KEY);

		h.useCredentials({ baseUrl: b.url, apiKey: KEY });
		expect(await h.poll()).toEqual([]);
		expect(h.state().account).not.toBe(account);
		const fresh = b.insertMessages({ count: 2 }).ids;
		expect(ids(await h.poll())).toEqual(fresh);
	});

	it('another API key on the same Base URL is another account too', async () => {
		const h = new TriggerHarness(
			{ baseUrl: a.url, apiKey: KEY },
			{ options: { emitExisting: true } },
		);
		expect(await h.poll()).toHaveLength(30);
		const account = h.state().account;
		h.useCredentials({ baseUrl: a.url, apiKey: 'other-key-0b7e' });
		// Emit Existing is on: the new account's messages once, as on a first activation.
		expect(await h.poll()).toHaveLength(30);
		expect(h.state().account).not.toBe(account);
		expect(JSON.stringify(h.state())).not.toContain('other-key-0b7e');
		expect(await h.poll()).toEqual([]);
	});
});

describe("The poll's time budget", () => {
	test("is n8n's budget, but never over 50 s: n8n 2.41 allows 5 minutes outside its durable scheduler and starts the next poll while one runs", () => {
		expect(pollBudgetMs(5 * 60_000)).toBe(DEFAULT_POLL_BUDGET_MS);
		expect(pollBudgetMs(40_000)).toBe(40_000);
		expect(pollBudgetMs(2_000)).toBe(2_000);
		// n8n 1.x has no budget; nonsense is ignored.
		expect(pollBudgetMs(undefined)).toBe(DEFAULT_POLL_BUDGET_MS);
		expect(pollBudgetMs(0)).toBe(DEFAULT_POLL_BUDGET_MS);
		expect(pollBudgetMs('40000')).toBe(DEFAULT_POLL_BUDGET_MS);
		expect(DEFAULT_POLL_BUDGET_MS).toBe(50_000);
	});
});
