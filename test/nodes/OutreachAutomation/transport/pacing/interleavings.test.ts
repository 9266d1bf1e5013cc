/**
 * Interleavings of one key's requests that real time cannot set up reliably, played on the simulator's
 * virtual clock: a Stop that lands right after a grant, a slot given back on a server without
 * rate-limit headers, the queue's hold on served requests, a 429 of a window that has already ended,
 * a rounding misread, probes answered after their window, a throw inside the timer's look. Each failed
 * before its fix.
 */
import type { IExecuteFunctions, INode } from 'n8n-workflow';

import {
	acquireSlot,
	cancelSlot,
	markExhausted,
	windowForTests,
	releaseSlot,
	resetRateLimitState,
	type Slot,
} from '../../../../../nodes/OutreachAutomation/transport/pacing';
import { useClock } from '../../../../../nodes/OutreachAutomation/transport/clock';
import { SlotQueue } from '../../../../../nodes/OutreachAutomation/transport/pacing/queue';
import { apiRequest } from '../../../../../nodes/OutreachAutomation/transport/request';
import { windowKeyOf } from '../../../../../nodes/OutreachAutomation/transport/request';
import { VirtualClock } from '../../../../sim/clock';
import { countLooks, looksOf } from '../../../../sim/looks';

const START = Date.parse('2026-12-01T09:00:00.000Z');

let clock: VirtualClock;
beforeEach(() => {
	resetRateLimitState();
	clock = new VirtualClock(START, 1);
	useClock(clock);
});
afterEach(() => {
	resetRateLimitState();
	useClock();
});

const headers = (remaining: number, resetAt: number) => ({
	'x-ratelimit-remaining': String(remaining),
	'x-ratelimit-reset': String(resetAt),
});

/** Lets the promise reactions queued so far run (the virtual clock does so after each event). */
const settle = async () => await clock.run(clock.now(), () => true);

/** Moves the virtual clock to `at`, firing the timers due on the way. */
async function advanceTo(at: number): Promise<void> {
	clock.at(at, () => undefined);
	await clock.run(at, () => false);
}

/** How many slots `key` grants now, without any answer or timer, to `wanted` requests queued at once. */
async function grantedNow(key: string, wanted: number): Promise<Slot[]> {
	const stop = new AbortController();
	const slots: Slot[] = [];
	for (let i = 0; i < wanted; i++)
		void acquireSlot(key, stop.signal).then((slot) => slot && slots.push(slot));
	await settle();
	stop.abort();
	await settle();
	return slots;
}

describe('one key on a virtual clock', () => {
	it('a Stop right after a grant gives the slot back unsent: the window keeps it for others', async () => {
		const node = { name: 'Outreach Automation', parameters: {} } as unknown as INode;
		const stop = new AbortController();
		let sent = 0;
		const ctx = {
			getNode: () => node,
			getExecutionCancelSignal: () => stop.signal,
			getCredentials: async () => ({ baseUrl: 'https://stop.example', apiKey: 'stop-key-1' }),
			helpers: {
				httpRequestWithAuthentication: async (_type: string, options: { signal?: AbortSignal }) => {
					sent++;
					if (options.signal?.aborted) throw new Error('aborted');
					return { statusCode: 200, headers: {}, body: { success: true, data: {} } };
				},
			},
		} as unknown as IExecuteFunctions;
		const key = (await windowKeyOf(ctx))!;
		const probe = (await acquireSlot(key))!;
		const request = apiRequest(ctx, { method: 'GET', path: '/leads/ld_1' });
		await settle();
		// The probe's answer grants the waiting request its slot; the execution stops before it is sent.
		releaseSlot(key, probe, headers(5, START + 60_000), clock.now(), 200);
		stop.abort();
		await expect(request).rejects.toThrow();
		expect(sent).toBe(0);
		expect(windowForTests(key)!.remaining).toBe(5);
	});

	it('a Stop while the request is prepared (after its grant, before sending) gives the slot back and says it was not sent', async () => {
		const node = { name: 'Outreach Automation', parameters: {} } as unknown as INode;
		const stop = new AbortController();
		let sent = 0;
		const ctx = {
			getNode: () => node,
			getExecutionCancelSignal: () => stop.signal,
			getCredentials: async () => ({ baseUrl: 'https://prepare.example', apiKey: 'stop-key-2' }),
			helpers: {
				httpRequestWithAuthentication: async (
					_type: string,
					options: { abortSignal?: AbortSignal },
				) => {
					// As n8n's HTTP client does: an aborted signal fails the request before it leaves.
					if (options.abortSignal?.aborted) throw new Error('canceled');
					sent++;
					return { statusCode: 200, headers: {}, body: { success: true, data: {} } };
				},
			},
		} as unknown as IExecuteFunctions;
		const key = (await windowKeyOf(ctx))!;
		const probe = (await acquireSlot(key))!;
		releaseSlot(key, probe, headers(5, START + 60_000), clock.now(), 200);
		const request = apiRequest(ctx, {
			method: 'POST',
			path: '/leads',
			itemIndex: 0,
			// The Stop lands while the item's parameters are read, after its slot was granted.
			prepare: async () => {
				stop.abort();
				return { body: { name: 'x' } };
			},
		});
		await expect(request).rejects.toMatchObject({ description: 'This request was not sent.' });
		expect(sent).toBe(0);
		expect(windowForTests(key)!.remaining).toBe(5);
	});

	it('a slot given back on a server without rate-limit headers is free again in its span', async () => {
		const key = 'headerless';
		const probe = (await acquireSlot(key))!;
		releaseSlot(key, probe, {}, clock.now(), 200);
		const span = windowForTests(key)!.span;
		const [slot] = await grantedNow(key, 1);
		expect(span.sent).toBe(2);
		cancelSlot(key, slot);
		expect(span.sent).toBe(1);
	});

	it('the queue keeps nothing of the requests it has served or let go', () => {
		const queue = new SlotQueue();
		const stop = new AbortController();
		const served: unknown[] = [];
		for (let i = 0; i < 100; i++)
			queue.push({
				resolve: (slot) => served.push(slot),
				reject: () => undefined,
				signal: i < 50 ? undefined : stop.signal,
			});
		for (let i = 0; i < 40; i++) queue.serve(undefined);
		stop.abort();
		const held = (queue as unknown as { items: unknown[] }).items.filter(Boolean);
		expect(served).toHaveLength(90);
		expect(queue.size).toBe(10);
		expect(held).toHaveLength(10);
	});

	it("a 429 with an ended window's reset, read after the next window opened, leaves the new window's room alone", async () => {
		const key = 'stale';
		const firstReset = START + 1_000;
		const probe = (await acquireSlot(key))!;
		releaseSlot(key, probe, headers(1, firstReset), clock.now(), 200);
		const [late] = await grantedNow(key, 1);
		// The window ends; the next one's probe is told 50 are left.
		await advanceTo(firstReset + 100);
		const [probe2] = await grantedNow(key, 1);
		expect(probe2.probe).toBe(true);
		releaseSlot(key, probe2, headers(50, firstReset + 1_000), clock.now(), 200);
		// Only now the request of the ended window is answered: 429, with the ended window's reset.
		const told = headers(0, firstReset);
		releaseSlot(key, late, told, clock.now(), 429);
		markExhausted(key, told, clock.now() + 500, clock.now(), late);
		// 50 less the late request, unanswered when the probe was told (it might have been counted after).
		expect(windowForTests(key)!.remaining).toBe(49);
		expect(await grantedNow(key, 3)).toHaveLength(3);
	});

	it('a server read as rounding up, whose probe after the named second is refused in the old window, rounds down: the key waits out the second rather than probing every 50 ms', async () => {
		// Seconds to wait count from when an answer left the server; read from its arrival, a reset
		// rounded down can look rounded up to the test probe (seed 1083: 16 processes, 14.5% 429s).
		const key = 'misread';
		const delta = (remaining: number, seconds: number) => ({
			'x-ratelimit-limit': '10',
			'x-ratelimit-remaining': String(remaining),
			'x-ratelimit-reset': String(seconds),
		});
		const probe = (await acquireSlot(key))!;
		const window = windowForTests(key)!;
		window.reset.rounding = 'up';
		window.reset.whole = 'no';
		releaseSlot(key, probe, delta(9, 2), clock.now(), 200);
		const named = window.reset.named!;
		// The named second passes; the next probe finds the old window still running, and spent.
		await advanceTo(window.resetAt! + 1);
		const [next] = await grantedNow(key, 1);
		expect(next.probe).toBe(true);
		const told = { ...delta(0, 0), 'retry-after': '1' };
		releaseSlot(key, next, told, clock.now(), 429);
		const until = markExhausted(key, told, clock.now() + 100, clock.now(), next);
		expect(window.reset.rounding).toBe('down');
		expect(until).toBeGreaterThanOrEqual(clock.now() + 1_000);
		expect(clock.now()).toBeGreaterThan(named);
	});

	it('429s to requests its own count had room for: others took them, so the next window is not spent at once', async () => {
		const key = 'taken';
		const resetAt = START + 2_000;
		const told = (remaining: number) => ({
			'x-ratelimit-limit': '100',
			...headers(remaining, resetAt),
		});
		const probe = (await acquireSlot(key))!;
		releaseSlot(key, probe, told(99), clock.now(), 200);
		// Its answers explain every step by its own requests, until someone else takes the last six.
		const slots: Slot[] = [];
		while (slots.length < 99) {
			const granted = await grantedNow(key, 99 - slots.length);
			slots.push(...granted);
			for (const slot of granted) {
				const remaining = 99 - slot.seq + 1;
				if (remaining >= 6) releaseSlot(key, slot, told(remaining), clock.now(), 200);
			}
			if (!granted.length) break;
		}
		expect(slots).toHaveLength(99);
		for (const slot of slots.slice(93)) {
			releaseSlot(key, slot, told(0), clock.now(), 429);
			markExhausted(key, told(0), resetAt, clock.now(), slot);
		}
		// The next window: what its probe is told is not all this process's to spend at once.
		await advanceTo(resetAt + 100);
		const [next] = await grantedNow(key, 1);
		expect(next.probe).toBe(true);
		releaseSlot(key, next, told(99), clock.now(), 200);
		expect(windowForTests(key)!.share.alone()).toBe(false);
		expect((await grantedNow(key, 99)).length).toBeLessThanOrEqual(50);
	});

	it('after an answer that came far too late, one request goes; given back unsent, it holds no one', async () => {
		const key = 'late';
		const resetAt = START + 60_000;
		const probe = (await acquireSlot(key))!;
		releaseSlot(key, probe, headers(90, resetAt), clock.now(), 200);
		const [first] = await grantedNow(key, 1);
		// Answered a second later, by answers that took nothing: what it says of the window is old.
		await advanceTo(START + 1_000);
		releaseSlot(key, first, headers(89, resetAt), clock.now(), 200);
		const refresh = await grantedNow(key, 5);
		expect(refresh).toHaveLength(1);
		// The execution stops before that one request is sent: the others go on.
		cancelSlot(key, refresh[0]);
		expect((await grantedNow(key, 5)).length).toBeGreaterThan(0);
	});

	it('on a service whose answers take 4 s, a probe is not given up as hung at 3 s: no second probe into its window', async () => {
		const key = 'slow';
		const probe = (await acquireSlot(key))!;
		await advanceTo(START + 4_000);
		// Its window (2 s) ended before the answer came.
		releaseSlot(key, probe, headers(99, START + 2_000), clock.now(), 200);
		const granted: Slot[] = [];
		const stop = new AbortController();
		for (let i = 0; i < 2; i++)
			void acquireSlot(key, stop.signal).then((slot) => slot && granted.push(slot));
		await settle();
		expect(granted.map((slot) => slot.probe)).toEqual([true]);
		await advanceTo(START + 10_000);
		expect(granted).toHaveLength(1);
		releaseSlot(key, granted[0], headers(99, START + 12_000), clock.now(), 200);
		await settle();
		expect(granted).toHaveLength(2);
		stop.abort();
	});

	it("a key's very first probe, unanswered with requests queued behind it: alone for 4 s, given up at 4.5 s for one more probe, never a third before an answer", async () => {
		// Until 2026-11-29 (issue #65) nothing went before the first answer or 30 s: one hung request
		// held a whole run. A second probe costs at most one request of a slow service's window.
		const key = 'first';
		const granted: Slot[] = [];
		const stop = new AbortController();
		for (let i = 0; i < 4; i++)
			void acquireSlot(key, stop.signal).then((slot) => slot && granted.push(slot));
		await settle();
		expect(granted.map((slot) => slot.probe)).toEqual([true]);
		// A service answering in 4 s has seen only the one.
		await advanceTo(START + 4_000);
		expect(granted).toHaveLength(1);
		await advanceTo(START + 4_500);
		expect(granted.map((slot) => slot.probe)).toEqual([true, true]);
		// No answer has been seen on this key: the second probe holds the rest.
		await advanceTo(START + 20_000);
		expect(granted).toHaveLength(2);
		releaseSlot(key, granted[0], headers(99, START + 60_000), clock.now(), 200);
		await settle();
		expect(granted.map((slot) => slot.probe)).toEqual([true, true, false, false]);
		stop.abort();
	});

	it("a key's first probe answered at 1 s: the look that would have given it up at 4.5 s is not kept, the queue waits for the reset alone", async () => {
		// A look set for the first probe's expiry and left standing after its answer: one look no one
		// wanted, on a timer ahead of the reset's (the simulator's processes then took turns anew).
		countLooks();
		const key = 'first-answered';
		const granted: Slot[] = [];
		const stop = new AbortController();
		for (let i = 0; i < 3; i++)
			void acquireSlot(key, stop.signal).then((slot) => slot && granted.push(slot));
		await settle();
		expect(granted).toHaveLength(1);
		await advanceTo(START + 1_000);
		releaseSlot(key, granted[0], headers(0, START + 10_000), clock.now(), 200);
		await settle();
		const looks = looksOf(windowForTests(key));
		await advanceTo(START + 9_999);
		expect(looksOf(windowForTests(key))).toBe(looks);
		expect(granted).toHaveLength(1);
		// The next window's probe goes once the reset is past.
		await advanceTo(START + 12_000);
		expect(granted.map((slot) => slot.probe)).toEqual([true, true]);
		stop.abort();
	});

	it('probes answered after the window they name: two in a row project the windows; a reset in whole seconds only once a second past it', async () => {
		/** One probe answered `lateMs` after the reset it names (`coarse`: named in epoch seconds). */
		const lateProbe = async (key: string, lateMs: number, coarse: boolean) => {
			const [probe] = await grantedNow(key, 1);
			expect(probe.probe).toBe(true);
			const named = Math.ceil((clock.now() + 1000) / 1000) * 1000;
			await advanceTo(named + lateMs);
			const reset = coarse ? String(named / 1000) : String(named);
			releaseSlot(
				key,
				probe,
				{ 'x-ratelimit-remaining': '99', 'x-ratelimit-reset': reset },
				clock.now(),
				200,
			);
		};
		await lateProbe('exact', 500, false);
		expect(windowForTests('exact')!.blind.active).toBe(false);
		await lateProbe('exact', 500, false);
		expect(windowForTests('exact')!.blind.active).toBe(true);
		// Named in whole seconds, half a second after the named one may still be in the window.
		await lateProbe('coarse', 500, true);
		await lateProbe('coarse', 500, true);
		expect(windowForTests('coarse')!.blind.active).toBe(false);
		await lateProbe('coarse', 1500, true);
		await lateProbe('coarse', 1500, true);
		expect(windowForTests('coarse')!.blind.active).toBe(true);
	});

	it("a throw inside the timer's look fails the requests waiting on it, not leaves them waiting for ever", async () => {
		const key = 'broken';
		const resetAt = START + 2_000;
		const probe = (await acquireSlot(key))!;
		releaseSlot(key, probe, headers(0, resetAt), clock.now(), 200);
		const outcomes: string[] = [];
		for (let i = 0; i < 3; i++)
			acquireSlot(key).then(
				() => outcomes.push('granted'),
				(error: Error) => outcomes.push(error.message),
			);
		await settle();
		expect(outcomes).toEqual([]);
		// The look at the reset (the timer's) meets a fault of the pacing's own.
		const window = windowForTests(key)!;
		const roll = jest.spyOn(window, 'roll').mockImplementationOnce(() => {
			throw new Error('a fault');
		});
		await advanceTo(resetAt + 1_000);
		expect(roll).toHaveBeenCalledTimes(1);
		expect(outcomes).toEqual(
			Array(3).fill(
				'The rate-limit pacing failed (a fault), so the request was not sent: run it again',
			),
		);
		// The key is not left stuck: the next request is granted.
		roll.mockRestore();
		expect((await grantedNow(key, 1)).length).toBe(1);
	});
});
