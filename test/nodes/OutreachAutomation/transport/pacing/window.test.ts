import {
	acquireSlot,
	cancelSlot,
	parseResetHeader,
	parseRetryAfter,
	peekWindow,
	readRateLimitHeaders,
	releaseSlot,
	resetRateLimitState,
} from '../../../../../nodes/OutreachAutomation/transport/pacing';
import { RESET_MARGIN_MS } from '../../../../../nodes/OutreachAutomation/transport/constants';

const NOW = Date.parse('2026-11-22T10:00:00.000Z');

describe('rate-limit headers', () => {
	it.each([
		['epoch seconds', '1795356030', 1795356030_000],
		['epoch milliseconds', '1795356030250', 1795356030250],
		['seconds to wait', '42', NOW + 42_000],
		['fractional seconds to wait', '0.5', NOW + 500],
		['HTTP date', 'Sun, 22 Nov 2026 10:01:05 GMT', Date.parse('2026-11-22T10:01:05Z')],
	])('X-RateLimit-Reset as %s', (_name, value, expected) => {
		expect(parseResetHeader(value, NOW)).toBe(expected);
	});

	it('ignores what it cannot read', () => {
		expect(parseResetHeader(undefined, NOW)).toBeUndefined();
		expect(parseResetHeader('soon', NOW)).toBeUndefined();
		expect(
			readRateLimitHeaders({ 'x-ratelimit-remaining': 'lots' }, NOW).remaining,
		).toBeUndefined();
	});

	it('Retry-After as seconds or date', () => {
		expect(parseRetryAfter('3', NOW)).toBe(NOW + 3000);
		expect(parseRetryAfter('Sun, 22 Nov 2026 10:00:09 GMT', NOW)).toBe(NOW + 9000);
	});

	it('reads headers case-insensitively, arrays included', () => {
		expect(
			readRateLimitHeaders(
				{ 'X-RateLimit-Remaining': ['7'], 'X-RATELIMIT-RESET': '12', 'Retry-After': '2' },
				NOW,
			),
		).toEqual({
			remaining: 7,
			// Named in whole seconds: the pacer learns whether the server rounds them up or down.
			resetAt: NOW + 12_000,
			resetCoarse: true,
			retryAt: NOW + 2000,
		});
	});

	it('a reset in whole seconds (epoch seconds, HTTP date, seconds to wait) is marked coarse; epoch ms and fractions are exact', () => {
		const read = (reset: string) => readRateLimitHeaders({ 'x-ratelimit-reset': reset }, NOW);
		expect(read(String(NOW / 1000 + 12))).toEqual({ resetAt: NOW + 12_000, resetCoarse: true });
		expect(read(new Date(NOW + 12_000).toUTCString())).toEqual({
			resetAt: NOW + 12_000,
			resetCoarse: true,
		});
		expect(read('12')).toEqual({ resetAt: NOW + 12_000, resetCoarse: true });
		// An instant reads the same in every answer of its window; seconds to wait, counted from each
		// answer's arrival, do not.
		expect(read(String(NOW + 12_000))).toEqual({ resetAt: NOW + 12_000, resetFixed: true });
		expect(read(String(NOW / 1000 + 12.5))).toEqual({ resetAt: NOW + 12_500, resetFixed: true });
		expect(read('12.5')).toEqual({ resetAt: NOW + 12_500 });
	});

	it('an instant moved by a skewed server clock (read from Date, whole seconds) is not fixed', () => {
		const told = readRateLimitHeaders(
			{ 'x-ratelimit-reset': String(NOW + 12_000), date: new Date(NOW + 5_000).toUTCString() },
			NOW,
		);
		expect(told).toEqual({ resetAt: NOW + 7_000 });
	});

	it('an answer read seconds after the server wrote it (a busy process) is not a clock behind ours', () => {
		const headers = {
			'x-ratelimit-reset': String(NOW + 1_000),
			date: new Date(NOW).toUTCString(),
		};
		// Sent at NOW, read 7 s later: the server's Date lies in between.
		expect(readRateLimitHeaders(headers, NOW + 7_000, NOW)).toEqual({
			resetAt: NOW + 1_000,
			resetFixed: true,
		});
		// Without the sending time the same answer reads as a clock at least 6 s behind.
		expect(readRateLimitHeaders(headers, NOW + 7_000).resetAt).toBe(NOW + 7_000);
		// A Date older than the request itself is skew.
		expect(readRateLimitHeaders(headers, NOW + 7_000, NOW + 5_000).resetAt).toBe(NOW + 5_000);
	});

	it('a negative remaining reads as nothing left; an absurd or unreadable one as unknown', () => {
		const remaining = (value: string) =>
			readRateLimitHeaders({ 'x-ratelimit-remaining': value }, NOW).remaining;
		expect(remaining('-3')).toBe(0);
		expect(remaining('0')).toBe(0);
		expect(remaining('99')).toBe(99);
		expect(remaining('99999999999')).toBeUndefined();
		expect(remaining('1e3')).toBeUndefined();
	});
});

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
		peekWindow('w5')!.share.cautious = false;
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

describe('whole-second windows and the end of a shared window', () => {
	const coarse = (remaining: number, namedMs: number) => ({
		'x-ratelimit-limit': '10',
		'x-ratelimit-remaining': String(remaining),
		'x-ratelimit-reset': String(Math.round(namedMs / 1000)),
	});

	beforeEach(() => resetRateLimitState());

	/** A window of `key` half spent, on a server known (as its tests would teach) to round up, 5-s windows. */
	async function wholeSecondWindow(key: string) {
		const now = Date.now();
		const named = Math.ceil(now / 1000) * 1000 + 5000;
		const probe = (await acquireSlot(key))!;
		releaseSlot(key, probe, coarse(5, named), now);
		const window = peekWindow(key)!;
		window.rounding = 'up';
		window.whole = 'yes';
		window.wholeMs = 5000;
		const slot = (await acquireSlot(key))!;
		expect(slot.probe).toBe(false);
		return { now, named, window, slot };
	}

	it('a request told one less than the limit, with a later reset, opened that window: its exact end is known, as a probe’s would be', async () => {
		const { now, named, window, slot } = await wholeSecondWindow('opener');
		// The answer comes from a new window (someone else's old one ended early): 9 of 10, five seconds on.
		const at = now + 300;
		releaseSlot('opener', slot, coarse(9, named + 5000), at);
		expect(window.opened).toBe(at);
		// Waited out to five seconds after it opened it, not to the named second (up to a second later).
		expect(window.resetAt).toBe(at + 5000 + RESET_MARGIN_MS);
		expect(window.resetAt).toBeLessThanOrEqual(named + 5000 + RESET_MARGIN_MS);
	});

	it('a request told fewer than the limit less one did not open its window: the named second stands', async () => {
		const { now, named, window, slot } = await wholeSecondWindow('joiner');
		releaseSlot('joiner', slot, coarse(6, named + 5000), now + 300);
		expect(window.opened).toBeUndefined();
		expect(window.resetAt).toBe(named + 5000 + RESET_MARGIN_MS);
	});

	it('a shared window is spread to before its earliest end, by a margin that grows with the time answers take', async () => {
		const probe = (await acquireSlot('margin'))!;
		const window = peekWindow('margin')!;
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
