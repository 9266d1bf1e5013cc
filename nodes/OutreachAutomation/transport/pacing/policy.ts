/** When the head of a key's queue may go: from what the window knows, what to do (grant, take a sure
 * figure, draw a lot, look again when). A pure function of a read-only window: no clock, no random;
 * the pump (index.ts) passes the decision to observe.ts, which carries it out. */
import { MAX_SINGLE_WAIT_MS } from '../constants';
import { WHOLE_SECOND_MS } from './reset';
import type { WindowView } from './window';

/** With no reset known to wait for, the policy looks again after this long. */
const LOOK_AGAIN_MS = 1000;

export type Decision =
	/** The head may go: as the window's probe, as one of a span's budget, as one of the window's room. */
	| { grant: 'probe' }
	| { grant: 'span'; opens: boolean }
	| { grant: 'blind' }
	| {
			grant: 'share';
			/** Fewer left than processes on the key: a request that may find the window spent. */
			last: boolean;
			/** Spreading a shared window: when the request after this one may go. */
			nextSendAt?: number;
	  }
	/** Take the sure figure as what is left, then ask again. */
	| { change: 'resume'; remaining: number }
	/** Draw this process's lot for the window's last requests with this chance, then ask again. */
	| { draw: number }
	/** The reset is further away than we may wait: the head fails, saying until when. */
	| { tooLongUntil: number }
	/** Look again at the next answer, or at `at` if that comes first. */
	| { at?: number };

/** A reset further away than we may wait fails the head at once. */
function waitUntil(until: number, now: number): Decision {
	return until - now > MAX_SINGLE_WAIT_MS ? { tooLongUntil: until } : { at: until };
}

/** What to do about the head. `waiting`: own requests queued, the head included. */
export function decide(window: WindowView, now: number, waiting: number): Decision {
	if (window.blind.active) {
		const at = window.blind.nextAt(now);
		return at <= now ? { grant: 'blind' } : { at };
	}
	if (window.remaining !== undefined && window.remaining <= 0) {
		// Answers out of order can take the own count to 0 early: with none of this window in flight,
		// the server's lowest figure less what may still be counted after it is sure.
		if (window.inFlightNow() > 0 && (window.toldLow ?? 0) > 0) return { at: window.resetAt };
		const sure = (window.toldLow ?? 0) - window.flight.size;
		if (sure > 0 && window.share.alone()) return { change: 'resume', remaining: sure };
		return waitUntil(window.resetAt ?? now + LOOK_AGAIN_MS, now);
	}
	if (window.unpaced) return unpaced(window, now, waiting);
	// One probe opens a window; the others wait for what it is told.
	if (window.remaining === undefined) {
		if (window.probing !== undefined) return {};
		return now < window.probeAfter ? waitUntil(window.probeAfter, now) : { grant: 'probe' };
	}
	return shared(window, now, waiting);
}

/** A server without rate-limit headers: a budget per span, learnt from 429s (span.ts). */
function unpaced(window: WindowView, now: number, waiting: number): Decision {
	const span = window.span;
	// Until a 429 has taught the limit, grow as slow start does rather than burst the assumed one.
	if (!span.learnt && window.inFlightNow() >= window.share.cwnd) return {};
	if (now >= span.end()) return { grant: 'span', opens: true };
	if (!span.hasRoom()) return waitUntil(span.start + span.spanMs, now);
	// More to send than the span has room for: spread it (span.ts).
	if (span.learnt && waiting > span.budget - span.sent && now < span.spreadAt())
		return { at: span.spreadAt() };
	return { grant: 'span', opens: false };
}

/** A window whose `remaining` is known, alone on the key or shared with others (share.ts). */
function shared(window: WindowView, now: number, waiting: number): Decision {
	// After an answer that came too late, the one request sent since must be answered first.
	if (window.refreshFrom !== undefined && window.flight.lastSeq() > window.refreshFrom) return {};
	const inFlight = window.inFlightNow();
	const left = window.remaining! + inFlight;
	const sharers = window.share.current(inFlight);
	const alone = window.share.alone(inFlight);
	const allowance = window.share.allowance(left, inFlight, alone);
	if (typeof allowance !== 'number') return allowance;
	if (inFlight < allowance) {
		const last = left < Math.ceil(sharers) && !alone;
		// What this process still has to send, if no more than its share, goes at once.
		const demand = waiting + inFlight;
		const spreadBy = window.share.spreadBy(sharers, inFlight);
		if (alone || window.resetAt === undefined || demand <= Math.floor(left / spreadBy))
			return { grant: 'share', last };
		if (now < window.nextSendAt) return { at: Math.min(window.nextSendAt, window.resetAt) };
		return { grant: 'share', last, nextSendAt: now + spreadGap(window, now, spreadBy, left) };
	}
	// Our share is in flight: the next answer says more. With none, the rest is the others'.
	if (inFlight > 0) return { at: window.resetAt };
	return waitUntil(window.resetAt ?? now + LOOK_AGAIN_MS, now);
}

/** A share goes a request per gap until the window's earliest end: a burst would find it spent. */
function spreadGap(window: WindowView, now: number, sharers: number, left: number): number {
	const named = window.reset.named ?? window.resetAt!;
	const end =
		(window.reset.coarse ? named - WHOLE_SECOND_MS : Math.min(window.resetAt!, named)) -
		window.spreadMargin();
	return (Math.max(0, end - now) * sharers) / Math.max(1, left);
}
