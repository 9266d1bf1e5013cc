/**
 * When the request at the head of a key's queue may go: the pacing's policy, asked by the queue's
 * pump (index.ts) whenever something changed. It reads and updates what the window knows (window.ts:
 * the server's figures, own requests in flight; share.ts: others on the key; span.ts: a server
 * without headers) and answers with a slot, or with when to look again. It never waits itself.
 */
import { MAX_SINGLE_WAIT_MS } from '../constants';
import { WHOLE_SECOND_MS, type Slot, type Window } from './window';

/** With no reset known to wait for, the policy looks again after this long. */
const LOOK_AGAIN_MS = 1000;

export type Decision =
	/** The head may go now with this slot. */
	| { slot: Slot }
	/**
	 * Look again at the next answer, or at `at` if that comes first (undefined: only an answer can
	 * change anything; a request is in flight then).
	 */
	| { slot?: undefined; at?: number };

/** A reset further away than we may wait: the head gets a slot that says so, and fails. */
function waitUntil(window: Window, until: number, now: number): Decision {
	if (until - now > MAX_SINGLE_WAIT_MS)
		return { slot: { probe: false, epoch: window.epoch, seq: 0, tooLongUntil: until } };
	return { at: until };
}

/**
 * `waiting`: requests of this process queued for the key (the head included): with those in flight,
 * what it still has to send.
 */
export function decide(window: Window, now: number, waiting: number): Decision {
	// Each pass either answers or changes the window so that the next pass answers.
	for (let pass = 0; pass < 3; pass++) {
		if (window.resetAt !== undefined && now >= window.resetAt) window.roll();
		if (window.remaining !== undefined && window.remaining <= 0) {
			// Counting own requests in flight against answers that arrived out of order can reach 0
			// early: with none of this window's in flight, the server's lowest figure less what may
			// still be counted after it (own requests of earlier windows, or given up on) is sure.
			if (window.inFlightNow() > 0 && (window.toldLow ?? 0) > 0) return { at: window.resetAt };
			const sure = (window.toldLow ?? 0) - window.unanswered();
			if (sure > 0 && window.share.alone()) {
				window.remaining = sure;
				continue;
			}
			return waitUntil(window, window.resetAt ?? now + LOOK_AGAIN_MS, now);
		}
		if (window.unpaced) return unpaced(window, now);
		if (window.remaining === undefined) {
			// One probe opens a window; the others wait for what it is told.
			if (window.probing === undefined) return { slot: window.send(true, now) };
			return {};
		}
		return shared(window, now, waiting);
	}
	return { at: now + LOOK_AGAIN_MS };
}

/** A server without rate-limit headers: a budget per span, learnt from 429s (span.ts). */
function unpaced(window: Window, now: number): Decision {
	const span = window.span;
	if (now >= span.end()) span.openAt(now);
	// Until a 429 has taught the limit, grow as slow start does rather than burst the assumed one.
	if (!span.learnt && window.inFlightNow() >= window.share.cwnd) return {};
	if (span.take()) return { slot: window.send(false, now) };
	return waitUntil(window, span.start + span.spanMs, now);
}

/** A window whose `remaining` is known, alone on the key or shared with others (share.ts). */
function shared(window: Window, now: number, waiting: number): Decision {
	const remaining = window.remaining!;
	const inFlight = window.inFlightNow();
	const left = remaining + inFlight;
	let sharers = window.share.current(inFlight);
	let alone = window.share.alone(inFlight);
	// With others on the key, its share is spread over what is left of the window (sent in one
	// burst, every process's would land on a window already spent by the others'), one request
	// every `gap`: to the window's earliest possible end (a reset named in whole seconds may be up
	// to a second after it).
	let gap = 0;
	if (!alone && window.resetAt !== undefined) {
		const named = window.namedReset ?? window.resetAt;
		const end =
			(window.coarse ? named - WHOLE_SECOND_MS : Math.min(window.resetAt, named)) -
			window.spreadMargin();
		// A gap past the window's end leaves the rest of it to the others (the pace is forgotten when
		// the window ends: it says nothing of the next).
		gap = (Math.max(0, end - now) * sharers) / Math.max(1, left);
		// Others silent for over a second and several of those gaps have finished: the rest is ours.
		if (window.share.othersQuiet(now, gap)) {
			alone = true;
			sharers = 1;
		}
	}
	if (inFlight < window.share.allowance(left, inFlight, alone)) {
		// What this process still has to send, if no more than its share, goes at once.
		const demand = waiting + inFlight;
		if (!alone && window.resetAt !== undefined && demand > Math.floor(left / sharers)) {
			if (now < window.nextSendAt) return { at: Math.min(window.nextSendAt, window.resetAt) };
			window.nextSendAt = now + gap;
		}
		window.remaining = remaining - 1;
		const slot = window.send(false, now);
		// Fewer left than processes on the key: a request that may find the window spent.
		if (left < Math.ceil(sharers) && !alone) slot.last = true;
		return { slot };
	}
	// Our share is in flight: the next answer says more. With none in flight, the rest of this
	// window is the others'.
	if (inFlight > 0) return { at: window.resetAt };
	return waitUntil(window, window.resetAt ?? now + LOOK_AGAIN_MS, now);
}
