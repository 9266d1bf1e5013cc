import {
	acquireSlot,
	cancelSlot,
	windowForTests,
	releaseSlot,
	resetRateLimitState,
} from '../../../../../nodes/OutreachAutomation/transport/pacing';
import { systemClock, useClock } from '../../../../../nodes/OutreachAutomation/transport/clock';
import { Window } from '../../../../../nodes/OutreachAutomation/transport/pacing/window';

describe('the shared window', () => {
	const headers = (remaining: number, resetAt: number) => ({
		'x-ratelimit-remaining': String(remaining),
		'x-ratelimit-reset': String(resetAt),
	});
	// Whether acquireSlot gives a slot now or makes the caller wait (for the reset, a minute away).
	const grantsNow = async (key: string) =>
		Promise.race([
			acquireSlot(key).then(() => true),
			new Promise<boolean>((r) => setTimeout(() => r(false), 100)),
		]);

	const grantNow = async (key: string) =>
		Promise.race([
			acquireSlot(key),
			new Promise<undefined>((r) => setTimeout(() => r(undefined), 100)),
		]);

	beforeEach(() => resetRateLimitState());

	it('a new window starts with one probe; the others wait for its headers', async () => {
		const first = (await acquireSlot('w1'))!;
		expect(first.probe).toBe(true);
		const second = acquireSlot('w1');
		expect(
			await Promise.race([
				second.then(() => 'granted'),
				new Promise((r) => setTimeout(() => r('waiting'), 50)),
			]),
		).toBe('waiting');
		releaseSlot('w1', first, headers(5, Date.now() + 60_000));
		expect((await second)!.probe).toBe(false);
	});

	it('counts unanswered requests of the old window against the new one, and ignores their stale headers', async () => {
		const probe = (await acquireSlot('w2'))!;
		releaseSlot('w2', probe, headers(2, Date.now() + 30));
		const a = (await acquireSlot('w2'))!;
		const b = (await acquireSlot('w2'))!;
		// The window resets while a and b are still unanswered: the next request probes the new window.
		const probe2 = (await acquireSlot('w2'))!;
		expect(probe2.probe).toBe(true);
		releaseSlot('w2', probe2, headers(10, Date.now() + 60_000));
		// a and b may land in the new window: 10 - 2 left. Their answers say "0 left" of the old one.
		releaseSlot('w2', a, headers(0, Date.now()));
		releaseSlot('w2', b, headers(0, Date.now()));
		// Each grant answered at once (as the server would count it), so only the window limits them.
		let granted = 0;
		for (;;) {
			const slot = await grantNow('w2');
			if (!slot) break;
			granted++;
			releaseSlot('w2', slot, headers(8 - granted, Date.now() + 60_000));
		}
		expect(granted).toBe(8);
	});

	it('a slot given back unused (input refused before sending) is free for the next request', async () => {
		const probe = (await acquireSlot('w3'))!;
		releaseSlot('w3', probe, headers(1, Date.now() + 60_000));
		const refused = (await acquireSlot('w3'))!;
		// Requests wait in order: the one queued now is the one the given-back slot goes to.
		const next = acquireSlot('w3');
		const granted = () =>
			Promise.race([next.then(() => true), new Promise((r) => setTimeout(() => r(false), 100))]);
		expect(await granted()).toBe(false);
		cancelSlot('w3', refused);
		expect(await granted()).toBe(true);
		expect(await grantsNow('w3')).toBe(false);
	});

	/** Takes every slot granted now, each answered at once with what `answer` says (the server's count). */
	async function takeAll(key: string, answer: () => Record<string, string>): Promise<number> {
		for (let taken = 0; ; taken++) {
			const stop = new AbortController();
			const timer = setTimeout(() => stop.abort(), 50);
			const slot = await acquireSlot(key, stop.signal);
			clearTimeout(timer);
			if (!slot) return taken;
			releaseSlot(key, slot, answer());
		}
	}

	it('a window started by own requests sent late is taken less every own request still unanswered: a server may count them in another order than sent', async () => {
		const reset = Date.now() + 60_000;
		const probe = (await acquireSlot('w5'))!;
		releaseSlot('w5', probe, headers(9, reset));
		windowForTests('w5')!.share.cautious = false;
		const sent = [];
		for (let i = 0; i < 9; i++) sent.push((await acquireSlot('w5'))!);
		// The first four are counted in this window; the other five after its end, in the next one,
		// in this order: the 7th (it opens the window: 9 of 10 left), then what is granted now, then
		// the 5th, 6th, 8th and 9th (a load balancer in front of several servers).
		const next = reset + 1000;
		let left = 9;
		releaseSlot('w5', sent[6], headers(left, next));
		// Five own requests may still be counted in the new window, and four of the old one may be:
		// what is surely left is 9 - 8. Counting only those sent after the 7th, 7 would go at once.
		expect(await takeAll('w5', () => headers(--left, next))).toBe(1);
		for (const i of [4, 5, 7, 8]) releaseSlot('w5', sent[i], headers(--left, next));
		// Nothing was free yet: the four of the old window may still be counted in this one.
		expect(await takeAll('w5', () => headers(--left, next))).toBe(0);
		for (const i of [0, 1, 2, 3]) releaseSlot('w5', sent[i], headers(8 - i, reset));
		// Everything answered: the server's lowest figure is exact again, the late answers included.
		expect(await takeAll('w5', () => headers(--left, next))).toBe(4);
		expect(left).toBe(0);
	});
});

describe('the end of a shared window', () => {
	const coarse = (remaining: number, namedMs: number) => ({
		'x-ratelimit-limit': '10',
		'x-ratelimit-remaining': String(remaining),
		'x-ratelimit-reset': String(Math.round(namedMs / 1000)),
	});

	beforeEach(() => resetRateLimitState());

	it('a shared window is spread to before its earliest end, by a margin that grows with the time answers take', async () => {
		const probe = (await acquireSlot('margin'))!;
		const window = windowForTests('margin')!;
		expect(window.spreadMargin()).toBe(250);
		// Answers that take 200 ms: the last requests must go out 800 ms before the end to arrive in it.
		releaseSlot('margin', probe, coarse(9, Date.now() + 60_000), probe.sentAt! + 200);
		for (let i = 0; i < 20; i++) {
			const slot = (await acquireSlot('margin'))!;
			releaseSlot('margin', slot, coarse(8, Date.now() + 60_000), slot.sentAt! + 200);
			window.remaining = 8;
		}
		expect(window.spreadMargin()).toBeGreaterThanOrEqual(790);
		expect(window.spreadMargin()).toBeLessThanOrEqual(800);
		// A slot given back unused says nothing of how long answers take.
		const unused = (await acquireSlot('margin'))!;
		cancelSlot('margin', unused);
		expect(window.spreadMargin()).toBeGreaterThanOrEqual(790);
		// A request that timed out after a minute: the margin grows, but never past 2 s.
		const slow = (await acquireSlot('margin'))!;
		releaseSlot('margin', slow, coarse(7, Date.now() + 60_000), slow.sentAt! + 60_000);
		expect(window.spreadMargin()).toBe(2000);
	});
});

describe('more processes than a window holds', () => {
	afterEach(() => useClock());

	it('a probe refused waits 0 to 2^n - 1 windows after n refusals (at most 2 min); one that found half a window shortens that', () => {
		// The lot always draws its highest: the wait is the most the rule allows.
		useClock({ ...systemClock, random: () => 0.99 });
		const window = new Window();
		window.limit = 20;
		window.resetAt = 5_000;
		window.toldLow = 3;
		// Sent at 0, told of a reset at 5 s: windows are 5 s long; 3 of 20 left is no sign of room.
		window.probeAnswered(0);
		const waits = [1, 2, 3, 4, 5, 6].map(() => {
			window.probeRefused(10_000);
			return window.probeAfter - 10_000;
		});
		expect(waits).toEqual([5_000, 15_000, 35_000, 75_000, 120_000, 120_000]);
		window.toldLow = 10;
		window.probeAnswered(0);
		window.probeRefused(10_000);
		expect(window.probeAfter - 10_000).toBe(120_000);
		window.probeAnswered(0);
		window.probeAnswered(0);
		window.probeRefused(10_000);
		expect(window.probeAfter - 10_000).toBe(75_000);
	});
});
