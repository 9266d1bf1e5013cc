/**
 * What a process infers about others on its key from its own answers alone (share.ts) and how a server
 * without headers is learnt (span.ts). The separate processes of processes.test.ts prove the whole; these
 * pin down each inference with the answers that lead to it.
 */
import { Share } from '../../../../../nodes/OutreachAutomation/transport/pacing/share';
import { Span } from '../../../../../nodes/OutreachAutomation/transport/pacing/span';

const T = Date.parse('2026-11-24T10:00:00.000Z');

/** A share that has seen one whole window alone, with a limit of 100. */
function settled(): Share {
	const share = new Share();
	share.limit = 100;
	for (let seq = 1; seq <= 10; seq++) share.answered(100 - seq, seq);
	share.newWindow(0);
	return share;
}

/** A share whose probe joined a window of 100 that others had spent down to `left`. */
function joinedAt(left: number): Share {
	const share = new Share();
	share.limit = 100;
	share.started(left, true);
	return share;
}

/** Own answers `seq` told `remaining`, in that order. */
function answers(share: Share, told: Array<[remaining: number, seq: number]>): void {
	for (const [remaining, seq] of told) share.answered(remaining, seq);
}

describe('others on the key, from own answers', () => {
	it('a window this process opened and spent alone: alone, no slow start', () => {
		const share = settled();
		expect(share.alone()).toBe(true);
		expect(share.cautious).toBe(false);
		expect(share.allowance(90, 0)).toBe(90);
	});

	it('a window someone else opened: others, although its own answers explain every later step', () => {
		const share = settled();
		// Its first answer says 90 of 100: ten requests of someone else's came before it.
		answers(share, [
			[90, 11],
			[89, 12],
			[88, 13],
			[87, 14],
		]);
		share.newWindow(0);
		expect(share.alone()).toBe(false);
		expect(share.sharers).toBeGreaterThan(2);
		expect(share.cautious).toBe(true);
	});

	it('a window joined after someone spent most of it: others while it lasts; for the next, only what showed since', () => {
		// Someone took 81 of 100 before this process's first window (or before a probe sent at a reset
		// named too early): that says how much is left, not how many will share the next window.
		const share = joinedAt(19);
		answers(share, [
			[19, 1],
			[15, 2],
			[11, 3],
			[7, 4],
		]);
		expect(share.current()).toBeGreaterThan(20);
		share.newWindow(0);
		// 12 of the fall since its first answer, 3 of them its own (from the limit: 93 of 100, 4 its own).
		expect(share.sharers).toBeCloseTo(4);
	});

	it('a window joined after someone spent most of it: its share is spread by the fall since its first answer, not by the past', () => {
		const quiet = joinedAt(40);
		answers(quiet, [
			[40, 1],
			[39, 2],
		]);
		// 60 of the window went before it came (sharers from the limit: 30), none since.
		expect(quiet.current()).toBeGreaterThan(20);
		expect(quiet.spreadBy(quiet.current(), 0)).toBe(1);

		const busy = joinedAt(40);
		answers(busy, [
			[40, 1],
			[36, 2],
		]);
		// Three of others' since its first answer, one of its own.
		expect(busy.spreadBy(busy.current(), 0)).toBeCloseTo(4);
		// One answer shows nothing since: the past is all it has.
		const first = joinedAt(40);
		answers(first, [[40, 1]]);
		expect(first.spreadBy(first.current(), 0)).toBe(first.current());
	});

	it('a window joined after others spent most of it never shows this process alone: slow start goes on', () => {
		// Its first answer says 5 of 100 are left, and its own five requests take the rest: measured from
		// that answer it was alone, but someone else spent 95. Until 2026-11-27 it took that for being
		// alone and spent its whole next window at once, as did the one that had spent the 95.
		const share = joinedAt(5);
		answers(share, [
			[4, 1],
			[3, 2],
			[2, 3],
			[1, 4],
			[0, 5],
		]);
		share.newWindow(0);
		expect(share.sharers).toBe(1);
		expect(share.cautious).toBe(true);
		expect(share.allowance(99, 0)).toBeLessThan(99);
	});

	it('a window that showed anyone else: at least two sharers for the next, however small their part', () => {
		// The ratio alone would hold any split: 97 own of 100 measures 1.03 and keeps 97 a window, while
		// the process that got 3 measures 33 and keeps 3.
		const share = settled();
		answers(
			share,
			Array.from({ length: 97 }, (_, i): [number, number] => [96 - i - (i >= 50 ? 2 : 0), 11 + i]),
		);
		share.newWindow(0);
		expect(share.sharers).toBe(2);
		expect(share.alone()).toBe(false);
		expect(share.allowance(100, 0)).toBeLessThanOrEqual(50);
	});

	it('a 429 although the window seemed to have room: others, however few steps its answers showed', () => {
		const share = settled();
		answers(share, [
			[99, 11],
			[98, 12],
		]);
		share.overrun(13);
		share.newWindow(0);
		expect(share.alone()).toBe(false);
	});

	it('one each of the last few of a shared window, rather than leaving them unused', () => {
		const share = new Share();
		share.limit = 100;
		share.sharers = 3;
		expect(share.allowance(2, 0)).toBe(1);
		expect(share.allowance(2, 1)).toBe(0);
		expect(share.allowance(0, 0)).toBe(0);
	});

	it('one each only where the 429s that costs stay small beside the limit; on a small limit, by lot', () => {
		// A window of three processes like this one: 9 of the limit gone, 3 of them its own.
		const measuredThree = (limit: number) => {
			const share = new Share();
			share.limit = limit;
			answers(share, [
				[limit - 3, 1],
				[limit - 6, 2],
				[limit - 9, 3],
			]);
			share.newWindow(0);
			expect(share.sharers).toBe(3);
			return share;
		};
		// As the pump does: a lot the policy asks for is drawn (observe.ts), then the share is read.
		const chances: number[] = [];
		const allowed = (share: Share) => {
			const room = share.allowance(2, 0);
			if (typeof room === 'number') return room;
			chances.push(room.draw);
			share.drawLot(Math.random() < room.draw);
			return share.allowance(2, 0);
		};
		// 100 a window: 2 429s at most are affordable, every process takes one of the last 2.
		const wide = Array.from({ length: 200 }, () => allowed(measuredThree(100)));
		expect(new Set(wide)).toEqual(new Set([1]));
		expect(chances).toEqual([]);
		// 20 a window: 2 429s would be 10% of it; each goes with a chance of 2 / (3 x 3).
		const narrow = Array.from({ length: 200 }, () => allowed(measuredThree(20)));
		expect(new Set(narrow)).toEqual(new Set([0, 1]));
		expect(new Set(chances)).toEqual(new Set([2 / 9]));
	});
});

describe('own requests in flight', () => {
	it('sent at once with an answer: the server may have counted them all before it (alone)', () => {
		const share = new Share();
		share.limit = 100;
		share.answered(99, 1);
		// Requests 2-31 went in one burst; request 5 was counted last of them: told 70.
		share.answered(70, 5, 31);
		expect(share.alone(29)).toBe(true);
	});

	it("sent after the answer's own burst: they do not hide the steps of others (a queue-mode worker kept 45 in flight into a spent window)", () => {
		const share = new Share();
		share.limit = 100;
		share.answered(99, 1);
		// One at a time, each answer followed by the next request: seq n told 100 - n.
		for (let seq = 2; seq <= 10; seq++) share.answered(100 - seq, seq, seq + 1);
		// 13 steps that are not its own, while 30 of its requests sent later are in flight.
		share.answered(77, 11, 12);
		expect(share.alone(30)).toBe(false);
		expect(share.current(30)).toBeGreaterThan(1.5);
	});
});

describe('own requests counted in the window after the one they were sent in', () => {
	it("answered before the new window's first answer, naming its reset: its own, not others'", () => {
		const share = settled();
		// Ten requests went at the end of the window before and reached the server after its end.
		share.newWindow(10);
		for (let seq = 11; seq <= 20; seq++)
			share.stragglerAnswered(100 - (seq - 10), seq, 'here', true);
		share.carry(0);
		// The new window's probe: told 89 of 100, eleven counted, all own.
		answers(share, [
			[89, 21],
			[88, 22],
			[87, 23],
		]);
		expect(share.alone()).toBe(true);
		expect(share.allowance(87, 0)).toBe(87);
	});

	it('carried at the first answer but counted in the window that ended: no longer carried', () => {
		const share = settled();
		share.newWindow(2);
		share.carry(2);
		// Both answered naming the ended window: of the 3 steps before the probe's answer, 2 were others'.
		for (let seq = 11; seq <= 12; seq++) share.stragglerAnswered(5, seq, 'ended', true);
		answers(share, [
			[97, 13],
			[96, 14],
		]);
		expect(share.alone()).toBe(false);
	});
});

describe('an estimate that must not stick', () => {
	it('windows with one own answer that shows no one else halve a high estimate, window by window', () => {
		const share = new Share();
		share.limit = 100;
		share.sharers = 64;
		const seen: number[] = [];
		for (let window = 0; window < 6; window++) {
			// Its probe opened the window: told 99 of 100.
			share.answered(99, window + 1);
			share.newWindow(0);
			seen.push(share.sharers);
		}
		expect(seen).toEqual([32, 16, 8, 4, 2, 1]);
	});

	it('a window with one own answer raises the estimate at most twofold: one noisy answer must not make it stick', () => {
		const share = new Share();
		share.limit = 100;
		share.sharers = 1.5;
		// Its one request was counted after 60 of someone else's: told 39 of 100.
		share.answered(39, 1);
		share.newWindow(0);
		expect(share.sharers).toBe(3);
		share.answered(39, 2);
		share.newWindow(0);
		expect(share.sharers).toBe(6);
	});

	it('others that finished since the last window: once this window has shown a few answers, it paces by what they show', () => {
		const share = settled();
		// A window shared by four: one own request in every four counted.
		answers(
			share,
			Array.from({ length: 10 }, (_, i): [number, number] => [96 - 4 * i, 11 + i]),
		);
		share.newWindow(0);
		expect(share.sharers).toBeCloseTo(4);
		// In the next, one other is left: every other request counted is its own.
		answers(share, [
			[98, 21],
			[96, 22],
			[94, 23],
		]);
		expect(share.current()).toBeCloseTo(4);
		answers(share, [[92, 24]]);
		expect(share.current()).toBeCloseTo(2);
	});

	it('slow start grows by the answers that show no one else, not by those that show others', () => {
		const share = new Share();
		share.limit = 100;
		share.started(96);
		const start = share.cwnd;
		// Own requests 1-3 explain each step: grows by one per answer.
		answers(share, [
			[99, 1],
			[98, 2],
			[97, 3],
		]);
		expect(share.cwnd).toBe(start + 3);
		// Ten steps of others' between own answers: no growth.
		answers(share, [
			[86, 4],
			[75, 5],
		]);
		expect(share.cwnd).toBe(start + 3);
	});

	it("slow start's first step is a part of what is left only when the limit is known, not guessed from this answer", () => {
		// Told 964 of a limit it was not told: the fall from its guess (965) shows no one, although 35
		// requests of others may have come first. It starts from two, as any slow start does.
		const guessed = new Share();
		guessed.limit = 965;
		guessed.started(964, true, false);
		expect(guessed.cwnd).toBe(2);
		const told = new Share();
		told.limit = 1000;
		told.started(964, true, true);
		expect(told.cwnd).toBe(Math.ceil(964 / 16));
	});

	it("after a window in which others took room it counted on, the next window's probe does not jump slow start: it goes on from the halved step", () => {
		// Many processes probing together after each reset: those told first see few others and jumped
		// to a sixteenth of the window every window, however often their requests had been refused.
		const share = new Share();
		share.limit = 100;
		share.started(99);
		answers(share, [[99, 1]]);
		share.overrun(2);
		const halved = share.cwnd;
		expect(halved).toBeLessThan(Math.ceil(94 / 16));
		share.newWindow(0);
		share.started(94);
		expect(share.cwnd).toBe(halved);
		// A window without such a refusal: the next probe steps again.
		share.newWindow(0);
		share.started(94);
		expect(share.cwnd).toBe(Math.ceil(94 / 16));
	});
});

describe('a server without rate-limit headers', () => {
	/** Runs `spans` full spans of `budget` requests without a 429; returns the budget after. */
	function cleanSpans(span: Span, spans: number, at: number): number {
		for (let i = 0; i < spans; i++) {
			span.openAt(at + i * 1000);
			while (span.hasRoom()) {
				span.take();
				span.pass();
			}
		}
		span.openAt(at + spans * 1000);
		return span.budget;
	}

	it('learns the limit from a 429, then grows by a fixed step after each clean span and shrinks by a ratio at each 429', () => {
		const span = new Span();
		span.openAt(T);
		for (let i = 0; i < 20; i++) span.passed++;
		span.learn(T + 1000, T + 50);
		expect(span.budget).toBe(20);
		expect(span.spanMs).toBe(1000);
		// One clean span: grows by a twelfth of the first budget learnt (2), the same step every time.
		expect(cleanSpans(span, 1, T + 1000)).toBe(22);
		expect(cleanSpans(span, 1, T + 2000)).toBe(24);
		// A 429 in the span right after a step: that step is taken back.
		span.passed = 5;
		span.learn(T + 4000, T + 3500);
		expect(span.budget).toBe(22);
		// A 429 in a span that did not step: the budget keeps 85% of itself, whatever passed (another
		// process may have taken the rest).
		span.openAt(T + 4000);
		span.learn(T + 5000, T + 4500);
		expect(span.budget).toBe(Math.floor(0.85 * 22));
		expect(cleanSpans(span, 1, T + 5000)).toBe(Math.floor(0.85 * 22) + 2);
		// A later 429 neither lengthens nor shortens the span learnt, and a wait in whole seconds that
		// ends after the span does is cut to the span's end.
		expect(span.learn(T + 8500, T + 6100)).toBe(T + 7000);
		expect(span.spanMs).toBe(1000);
	});

	it("the first 429's wait in whole seconds counts from the 429: the span is that wait and an answer's time, not the time since the span opened", () => {
		// Until 2026-11-28 a first 429 300 ms into the span (n8n's start of many items) made every span
		// 1.3 s for a 1-s window: bench 6 at 1.28-1.34x.
		const span = new Span();
		span.openAt(T);
		span.passed = 20;
		span.learn(T + 1300, T + 300, true, 20);
		expect(span.spanMs).toBe(1020);
		// Never longer than the time since the span opened, never under a second.
		const late = new Span();
		late.openAt(T);
		late.learn(T + 1000, T + 990, true, 50);
		expect(late.spanMs).toBe(1000);
	});

	it("the first 429's budget counts the span's requests answered after it too (they passed in the same window)", () => {
		const span = new Span();
		span.openAt(T);
		for (let i = 0; i < 17; i++) span.pass();
		span.learn(T + 1000, T + 50);
		expect(span.budget).toBe(17);
		for (let i = 0; i < 3; i++) span.pass();
		expect(span.budget).toBe(20);
		// Once the next span opens, answers no longer tell of the first.
		span.openAt(T + 1000);
		span.pass();
		expect(span.budget).toBe(20);
	});

	it('spreads a span when more waits than it has room for, so processes sharing a key meet its end alike', () => {
		const span = new Span();
		span.openAt(T);
		span.passed = 10;
		span.learn(T + 1000, T);
		span.openAt(T + 1000);
		expect(span.spreadAt()).toBe(T + 1000);
		span.take();
		span.take();
		// Two of ten sent: the third goes a fifth into the first nine tenths of the span (spread to its
		// very end, the last requests would open the server's next window early).
		expect(span.spreadAt()).toBe(T + 1000 + 180);
	});

	it('waits out a 429 that names no time as a key, doubling while the wait proves too short, and sends one request first after it', () => {
		const span = new Span();
		span.openAt(T);
		for (let i = 0; i < 30; i++) {
			span.take();
			span.pass();
		}
		// 30 passed, then a 429 with no Retry-After: a first guess of a second, not the span's length.
		let until = span.guess(T + 100);
		span.learn(until, T + 100, false);
		expect(until).toBe(T + 1100);
		expect(span.budget).toBe(30);
		// The next span opens with one request only; it is refused too: the wait doubles, and again.
		span.openAt(until);
		expect(span.hasRoom()).toBe(true);
		span.take();
		expect(span.hasRoom()).toBe(false);
		until = span.guess(T + 1110);
		span.learn(until, T + 1110, false);
		expect(until).toBe(T + 1110 + 2000);
		span.openAt(until);
		span.take();
		const at = until + 10;
		until = span.guess(at);
		span.learn(until, at, false);
		expect(until - (T + 3120)).toBe(4000);
		// This time the first request passes: the span's budget is open again, and the wait is kept.
		span.openAt(until);
		span.take();
		span.pass();
		expect(span.hasRoom()).toBe(true);
		for (let i = 1; i < 30; i++) span.take();
		expect(span.hasRoom()).toBe(false);
		// A wait that proved long enough is tried a quarter shorter next time (the window may be shorter).
		expect(span.guess(until + 500) - (until + 500)).toBe(3000);
		// Never longer than the documented window, however many refusals.
		for (let i = 0; i < 10; i++) {
			span.openAt(until);
			span.take();
			const now = until;
			until = span.guess(now);
			span.learn(until, now, false);
		}
		span.openAt(until);
		span.take();
		expect(span.guess(until) - until).toBe(60_000);
	});
});
