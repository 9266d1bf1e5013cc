/**
 * What one answer teaches a key's window: the server's figures, a window started early, a 429 that
 * says someone else took the room, a server without headers, a late answer of an earlier window. The
 * only writer of what answers tell; the key's pump (index.ts) looks at its queue after.
 */
import { readRateLimitHeaders, type HeaderBag, type RateLimitHeaders } from './headers';
import { WHOLE_SECOND_MS } from './reset';
import type { Slot, Window } from './window';

type Told = RateLimitHeaders & { remaining: number };

/** One answer as read: the request it answers, what it said, its status, when it came. */
interface Answer<T = RateLimitHeaders> {
	slot: Slot;
	told: T;
	status: number | undefined;
	now: number;
}

/** A window holding fewer requests than this per process on the key: their probes may fill it. */
const CROWDED_SHARE = 2;

/** An answer (any status) or, with neither `headers` nor `status`, a request that got none. */
export function observeAnswer(
	window: Window,
	slot: Slot,
	headers: HeaderBag,
	now: number,
	status: number | undefined,
): void {
	noticeStale(window, slot, headers, now);
	// A timeout or a dropped connection says nothing of how long answers take.
	window.answered(slot, headers === undefined ? undefined : now);
	const told = readRateLimitHeaders(headers, now, slot.sentAt);
	if (observeBlind(window, { slot, told, status, now }, headers !== undefined)) return;
	// An answer of an earlier window speaks of that window.
	const current = slot.epoch === window.epoch;
	if (window.unpaced && status !== undefined && status !== 429) {
		window.span.pass();
		if (!window.span.learnt) window.share.cwnd++;
	}
	if (status === 429 && current && !window.unpaced) countRefusal(window, slot);
	if (headers !== undefined && current) {
		const answer = { slot, told, status, now };
		if (told.remaining === undefined) noticeNoHeaders(window, answer);
		else observeWindow(window, answer as Answer<Told>);
	}
	if (headers !== undefined && !current && status !== 429 && told.remaining !== undefined)
		observeStraggler(window, slot, told as Told);
	if (slot.epoch === window.epoch - 1 && window.flight.of(slot.epoch) === 0)
		window.share.closeNow();
}

/** Answers slower than the window (blind.ts): whether this one was read so. A probe answered after
 * the reset it names starts it; answers well within a window end it. */
function observeBlind(window: Window, answer: Answer, answered: boolean): boolean {
	const { slot, told, status, now } = answer;
	const blind = window.blind;
	if (slot.blind !== undefined) {
		const refused = status === 429;
		blind.answered(
			slot.blind,
			now,
			answered ? { ...told, refused, sentAt: slot.sentAt } : undefined,
		);
	}
	if (blind.active) return !blind.leaves(window.flight.answerMs);
	const probed =
		slot.probe &&
		status !== undefined &&
		status < 400 &&
		told.remaining !== undefined &&
		told.resetAt !== undefined &&
		slot.sentAt !== undefined &&
		told.resetAt > slot.sentAt;
	// A reset in whole seconds may name a second before the real one: only a second later is it past.
	if (!probed) return false;
	const late = now >= told.resetAt! + (told.resetCoarse ? WHOLE_SECOND_MS : 0);
	if (!blind.probeAnswered(late)) return false;
	window.learnLimit(told);
	blind.enter(window.limit, told.resetAt!, told.resetAt! - slot.sentAt!, now);
	window.remaining = undefined;
	window.resetAt = undefined;
	return true;
}

/** An answer far later than answers take tells of the window as it was: unless surely alone, one
 * request goes and the next only after its answer (else a stalled process spends, on old figures, what
 * others took meanwhile). Read before this answer counts in the usual answer time. */
function noticeStale(window: Window, slot: Slot, headers: HeaderBag, now: number): void {
	if (window.refreshFrom !== undefined) {
		if (slot.seq > window.refreshFrom) window.refreshFrom = undefined;
		return;
	}
	// An answer of an ended window speaks of that window only.
	const current = slot.epoch === window.epoch;
	const shared = window.share.cautious || !window.share.alone();
	if (headers !== undefined && current && shared && window.flight.stale(slot.sentAt, now))
		window.refreshFrom = window.flight.lastSeq();
}

/** A 429 of this window to a probe, or an overrun (sent with room counted, not one of the last),
 * says others are on the key; any other, that the server had none left. */
function countRefusal(window: Window, slot: Slot): void {
	if (slot.probe && !slot.coarseTest) window.share.crowded();
	else if ((window.remaining ?? 0) > 0 && !slot.last) window.share.overrun(slot.seq);
	else window.share.spent(slot.seq);
}

/** Only the service's own answer to a probe (not a 429 or 5xx a proxy may send) says it sends no
 * rate-limit headers; requests are then paced by span.ts until they return. */
function noticeNoHeaders(window: Window, { slot, status, now }: Answer): void {
	const answered = status === undefined || (status < 500 && status !== 429);
	if (!slot.probe || !answered || window.unpaced) return;
	window.unpaced = true;
	window.span.openAt(now);
	window.span.sent = 1;
	window.span.passed = 1;
}

/** An answer of this window with the server's figures. */
function observeWindow(window: Window, answer: Answer<Told>): void {
	const { slot, told, status, now } = answer;
	window.unpaced = false;
	if (slot.coarseTest) window.reset.learn(slot.coarseTest, status, told);
	else if (slot.probe && status === 429) window.reset.refusedInEnded(told);
	window.learnLimit(told);
	// Any own request unanswered may be counted after this answer.
	const sure = told.remaining - window.flight.size;
	if (slot.probe) {
		// Joined a window others opened (the first, or the one that seemed to have ended).
		const joined =
			window.reset.ended === undefined ||
			(told.resetAt !== undefined && !window.reset.namesLaterThanEnded(told));
		openWindow(window, answer, sure);
		window.share.started(window.remaining ?? 0, joined, window.limitSeen(told));
		if (status !== 429) window.probeAnswered(slot.sentAt);
	} else if (
		window.reset.namesLater(told) &&
		window.remaining !== undefined &&
		sure > window.remaining
	) {
		// The server started a new window before the one we knew ended: take it as a probe would have.
		window.roll();
		openWindow(window, answer, sure);
	} else if (window.remaining !== undefined) {
		// What the server has left less own requests it counts after this one bounds the own count.
		const left = told.remaining - window.flight.sentAfter(slot.seq);
		window.remaining = Math.min(window.remaining, Math.max(0, left));
		if (
			told.remaining === 0 &&
			told.resetAt !== undefined &&
			told.resetAt > (window.reset.named ?? 0)
		)
			window.setReset(told, now);
	}
	if (status !== 429) window.share.answered(told.remaining, slot.seq, slot.burst?.last ?? slot.seq);
	window.toldLow = Math.min(window.toldLow ?? Infinity, told.remaining);
}

/** Takes a window as told (one less than the limit: this request opened it, about now). */
function openWindow(window: Window, { told, status, now }: Answer<Told>, sure: number): void {
	window.reset.opened = status !== 429 && told.remaining >= window.limit - 1 ? now : undefined;
	window.share.carry(window.stragglers());
	window.remaining = Math.max(0, sure);
	window.toldLow = told.remaining;
	window.setReset(told, now);
}

/** An answer of an earlier window, counted in it or, arriving after its end, in this one. */
function observeStraggler(window: Window, slot: Slot, told: Told): void {
	const counted = window.reset.namesLaterThanEnded(told) ? 'here' : 'ended';
	// Counted here after this window's answers so far: less is left than they said.
	if (counted === 'here' && window.toldLow !== undefined && !window.reset.namesLater(told))
		window.toldLow = Math.min(window.toldLow, told.remaining);
	window.share.stragglerAnswered(
		told.remaining,
		slot.seq,
		counted,
		slot.epoch === window.epoch - 1,
	);
}

/** A probe refused in a window that began after the one that ended (not sent a moment too early),
 * where so many share the key that their probes alone may fill it: others spent it first. */
function crowded(window: Window, told: RateLimitHeaders, slot: Slot | undefined): boolean {
	if (!slot?.probe || slot.coarseTest || slot.epoch !== window.epoch) return false;
	if (window.limit >= CROWDED_SHARE * window.share.sharers) return false;
	return window.reset.ended === undefined || window.reset.namesLaterThanEnded(told);
}

/** A 429: the window is spent until its Retry-After or reset (`fallback` when it names neither or a
 * time past). Returns that time (undefined: it speaks of an ended window only) and `crowded`. */
export function observeRefusal(
	window: Window,
	headers: HeaderBag,
	fallback: number,
	now: number,
	slot: Slot | undefined,
): { until: number | undefined; crowded: boolean } {
	const told = readRateLimitHeaders(headers, now, slot?.sentAt ?? now);
	// Answers slower than the window: the budget has learnt of this 429 (blind.ts); it waits its turn.
	if (window.blind.active) return { until: undefined, crowded: false };
	if (slot !== undefined && ofEndedWindow(window, told, slot))
		return { until: undefined, crowded: false };
	let until = refusedUntil(window, told, fallback, now);
	const crowdedOut = !window.unpaced && crowded(window, told, slot);
	const named = told.retryAt !== undefined || told.resetAt !== undefined;
	if (window.unpaced) until = window.span.learn(until, now, named, window.flight.answerMs);
	else if (crowdedOut) window.probeRefused(until);
	window.remaining = 0;
	if (until > (window.resetAt ?? 0)) {
		window.resetAt = until;
		// No longer the moment to test a whole-second reading.
		window.reset.testDue = undefined;
	}
	return { until, crowded: crowdedOut };
}

/** A 429 to a request of an ended window, naming that window's reset: it says nothing of this one. */
function ofEndedWindow(window: Window, told: RateLimitHeaders, slot: Slot): boolean {
	if (slot.epoch >= window.epoch || window.unpaced || told.resetAt === undefined) return false;
	return !window.reset.namesLaterThanEnded(told);
}

/** Until when a 429 says the window is spent. */
function refusedUntil(
	window: Window,
	told: RateLimitHeaders,
	fallback: number,
	now: number,
): number {
	let until = window.reset.exhaustedUntil(told) ?? fallback;
	if (until <= now) until = fallback;
	// Without headers, a 429 naming no time is waited out by the key as a whole (span.ts).
	if (window.unpaced && told.retryAt === undefined && told.resetAt === undefined)
		return window.span.guess(now);
	// A 429 of a window whose end is known exactly says it is spent, not longer (Retry-After rounds up).
	const named = window.reset.named;
	const sameWindow =
		told.resetAt !== undefined &&
		named !== undefined &&
		Math.abs(told.resetAt - named) < WHOLE_SECOND_MS;
	if (sameWindow && window.resetAt !== undefined && window.resetAt > now)
		return Math.min(until, window.resetAt);
	return until;
}
