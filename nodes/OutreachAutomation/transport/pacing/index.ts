/**
 * Rate-limit pacing, shared by every request of this process that uses the same credential.
 *
 * What a process knows: its own requests (sent, in flight, answered) and what each answer says:
 * `X-RateLimit-Remaining` and the reset (or nothing at all). It cannot see other processes on the key
 * (queue-mode workers, other n8n instances, the user's own scripts) and shares no memory with them.
 *
 * What it infers: from the fall of `remaining` beyond its own requests, how many processes like itself
 * the key's traffic amounts to, and it keeps only its share of what is left in flight (share.ts); from a
 * server without headers, the limit and window its 429s reveal (span.ts); from one probe at the named
 * second, whether a whole-second reset is rounded up or down (window.ts). After every reset one probe
 * goes first and the others wait for what it is told, so a fresh window is never overrun by a burst.
 *
 * How requests wait: in one queue per key (queue.ts), in order; the policy (policy.ts) is asked for the
 * head only, whenever an answer comes, a request arrives at an empty queue or the key's one timer rings,
 * so thousands of waiting requests cost nothing while they wait.
 */
import { createHash } from 'crypto';

import { WINDOW_IDLE_EXPIRY_MS } from '../constants';
import { now as currentTime } from './clock';
import { readRateLimitHeaders, type HeaderBag, type RateLimitHeaders } from './headers';
import { decide } from './policy';
import { Alarm, SlotQueue } from './queue';
import { Window, type Slot } from './window';

export {
	hasRateLimitHeaders,
	parseResetHeader,
	parseRetryAfter,
	readRateLimitHeaders,
	serverClockOffset,
	type RateLimitHeaders,
} from './headers';
export { pause } from './queue';
export { now, random, systemClock, useClock, type Clock } from './clock';
export type { Slot } from './window';

/**
 * A timer that fires this much later than asked says the process was busy: answers may be waiting to
 * be read, so requests are not given up on as hung at that look (the next one, a moment later, may).
 */
const STALLED_MS = 100;

/** One key: what this process knows of its window, its queue of requests, and its one timer. */
class Key {
	readonly window = new Window();
	readonly queue = new SlotQueue();
	readonly alarm = new Alarm((lateMs) => this.pump(lateMs < STALLED_MS));
	/** Looks the policy took, for tests: a bounded number per request. */
	looks = 0;
	/** Answers the service carried out or refused on their merits (not 429, not 5xx): the key moves. */
	progress = 0;

	get idle(): boolean {
		return this.queue.size === 0 && this.window.quiet;
	}

	/**
	 * Grants slots to the head of the queue while the policy allows, then sets the one timer for
	 * the next look (or none: an answer will come). Only a timer on time gives up on hung requests:
	 * an answer's look may come before other answers already received are read.
	 */
	pump(expireHung = false): void {
		if (expireHung) this.window.expireHung(currentTime());
		// What this look sends goes at once: one burst.
		this.window.endBurst();
		for (;;) {
			if (!this.queue.peek()) {
				this.alarm.cancel();
				return;
			}
			const now = currentTime();
			this.looks++;
			const decision = decide(this.window, now, this.queue.size);
			if (decision.slot) {
				this.queue.serve(decision.slot);
				continue;
			}
			// A request that never answers must not hold the others: look again when it counts as hung.
			const hungAt = this.window.hungAt();
			const at = decision.at === undefined ? hungAt : Math.min(decision.at, hungAt ?? Infinity);
			if (at !== undefined) this.alarm.set(at, now);
			return;
		}
	}
}

const keys = new Map<string, Key>();
let lastSweep = 0;

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * One server, one spelling: scheme and host lower-cased, default ports dropped, every loopback name
 * the same host. The path is kept (two services may share a host).
 */
export function normalizeOrigin(baseUrl: string): string {
	const match = /^([a-z][a-z0-9+.-]*):\/\/([^/?#]*)(.*)$/i.exec(baseUrl.trim());
	if (!match) return baseUrl;
	const scheme = match[1].toLowerCase();
	let host = match[2].replace(/^[^@]*@/, '').toLowerCase();
	host = host.replace(scheme === 'https' ? /:443$/ : /:80$/, '');
	const hostOnly = host.replace(/:\d+$/, '');
	if (LOOPBACK.has(hostOnly)) host = `loopback${host.slice(hostOnly.length)}`;
	return `${scheme}://${host}${match[3].replace(/\/+$/, '')}`;
}

/** Windows are keyed by a hash of origin and key: the key itself is never kept in memory here. */
export function windowKey(baseUrl: string, apiKey: string): string {
	return createHash('sha256')
		.update(`${normalizeOrigin(baseUrl)}\u0000${apiKey}`)
		.digest('hex');
}

/** Forgets windows nobody used for a while, so many keys over a long-lived n8n do not pile up. */
function sweep(now: number) {
	if (now - lastSweep < 60_000) return;
	lastSweep = now;
	for (const [name, key] of keys) {
		if (key.idle && now - key.window.lastUsed > WINDOW_IDLE_EXPIRY_MS) keys.delete(name);
	}
}

function keyFor(name: string, now = currentTime()): Key {
	sweep(now);
	let key = keys.get(name);
	if (!key) {
		key = new Key();
		keys.set(name, key);
	}
	key.window.lastUsed = now;
	return key;
}

/** For tests: what this process knows of a key's window (undefined when it knows nothing). */
export function peekWindow(key: string): Window | undefined {
	return keys.get(key)?.window;
}

/** For tests: what the mechanics spent on a key: looks of the policy, timers, waiting listeners. */
export function peekMechanics(
	key: string,
): { looks: number; timers: number; listeners: number; queued: number } | undefined {
	const found = keys.get(key);
	if (!found) return undefined;
	return {
		looks: found.looks,
		timers: found.alarm.started,
		listeners: found.queue.listeners(),
		queued: found.queue.size,
	};
}

/**
 * What sets the pace of a key, in a user's words: its limit (and others sharing it), or a server that
 * sends no rate-limit headers.
 */
export function describePace(name: string): string {
	const window = keys.get(name)?.window;
	if (!window) return "the API key's limit";
	if (window.unpaced) {
		const { budget, spanMs, learnt } = window.span;
		return (
			`a server that sends no rate-limit headers: about ${budget} requests per ${Math.round(spanMs / 1000)} s, ` +
			(learnt ? 'learnt from its 429 answers' : 'as the API documents')
		);
	}
	const others = Math.round(window.share.sharers) - 1;
	const limit = window.limit ? ` of ${window.limit} requests per window` : '';
	return (
		`the API key's limit${limit}` +
		(others >= 1 ? `, shared with about ${others} other process${others === 1 ? '' : 'es'}` : '')
	);
}

/** For tests: how many windows are remembered. */
export function rememberedWindows(): number {
	return keys.size;
}

/**
 * Waits for this request's turn in the key's queue and a slot the window allows; undefined once
 * `signal` aborts. A slot with `tooLongUntil` says the wait would be longer than we may wait.
 */
export async function acquireSlot(name: string, signal?: AbortSignal): Promise<Slot | undefined> {
	if (signal?.aborted) return undefined;
	const key = keyFor(name);
	return await new Promise<Slot | undefined>((resolve) => {
		const first = key.queue.size === 0;
		key.queue.push({ resolve, signal });
		// Behind others the head's turn comes first: the look it waits for will serve this one too.
		if (first) key.pump();
	});
}

/** Takes what the server said about its window (the probe's answer, or a window it started early). */
function adopt(window: Window, told: RateLimitHeaders, remaining: number, now: number): void {
	window.remaining = Math.max(0, remaining);
	window.toldLow = told.remaining;
	window.setReset(told, now);
}

/**
 * Feeds a response's headers (any status, or none after a network error) back into the window.
 * `status` tells a proxy's error (which says nothing about the service's pacing) from an answer.
 */
export function releaseSlot(
	key: string,
	slot: Slot,
	headers: HeaderBag,
	now = currentTime(),
	status?: number,
): void {
	const found = keyFor(key, now);
	const window = found.window;
	if (status !== undefined && status !== 429 && status < 500) found.progress++;
	// Only an answer tells how long answers take: a timeout or a dropped connection does not.
	window.answered(slot, headers === undefined ? undefined : now);
	const told = readRateLimitHeaders(headers, now, slot.sentAt);
	// An answer to a request of an earlier window speaks of that window (often "0 left"): not of this
	// one. Unless it names a window after this one: the server rolled over before this process did.
	const overtaken =
		slot.epoch !== window.epoch &&
		status !== 429 &&
		told.remaining !== undefined &&
		window.remaining !== undefined &&
		window.namesLaterWindow(told) &&
		told.remaining - window.unanswered() > window.remaining;
	const current = slot.epoch === window.epoch || overtaken;
	if (window.unpaced && status !== undefined && status !== 429) {
		window.span.passed++;
		if (!window.span.learnt) window.share.cwnd++;
	}
	// A 429 while the window seemed to have room: someone else on the key took it.
	if (status === 429 && current && !window.unpaced) {
		if (slot.probe && !slot.coarseTest) window.share.crowded();
		else if (slot.last) window.share.spent(slot.seq);
		else if ((window.remaining ?? 0) > 0) window.share.overrun(slot.seq);
	}
	if (headers !== undefined && current) {
		if (told.remaining === undefined) {
			// Only an answer of the service itself (not a 429 or 5xx a proxy may have sent) says it has
			// no rate-limit headers; then pace by an estimate until they return.
			const answered = status === undefined || (status < 500 && status !== 429);
			if (slot.probe && answered && !window.unpaced) {
				window.unpaced = true;
				window.span.openAt(now);
				window.span.sent = 1;
				window.span.passed = 1;
			}
		} else {
			window.unpaced = false;
			const previousNamed = window.namedReset;
			if (slot.coarseTest && previousNamed !== undefined)
				window.learnCoarse(slot.coarseTest, status, told, previousNamed);
			window.learnLimit(told);
			// What the server has left, less our own requests it will count after this one: a bound
			// on the process's own count of what is left, which covers requests counted out of order.
			const left = told.remaining - window.sentAfter(slot);
			// A window taken from this answer alone: any own request still unanswered (of this window or
			// an earlier one, sent before this one or after) may be counted in it after this answer.
			const sure = told.remaining - window.unanswered();
			const later = window.namesLaterWindow(told);
			if (slot.probe && !overtaken) {
				// Told one less than the limit: its probe opened the window, about now.
				window.opened = status !== 429 && told.remaining >= window.limit - 1 ? now : undefined;
				window.share.carry(window.stragglers());
				adopt(window, told, sure, now);
				window.share.started(window.remaining ?? 0);
			} else if (later && window.remaining !== undefined && sure > window.remaining) {
				// The server started a new window before the one we knew ended: take it as it is (told
				// one less than the limit, this request opened it, as a probe would have).
				window.roll();
				window.opened = status !== 429 && told.remaining >= window.limit - 1 ? now : undefined;
				window.share.carry(window.stragglers());
				adopt(window, told, sure, now);
			} else if (window.remaining !== undefined) {
				window.remaining = Math.min(window.remaining, Math.max(0, left));
				if (
					told.remaining === 0 &&
					told.resetAt !== undefined &&
					told.resetAt > (window.namedReset ?? 0)
				)
					window.setReset(told, now);
			}
			if (status !== 429)
				window.share.answered(told.remaining, slot.seq, now, slot.burst?.last ?? slot.seq);
			window.toldLow = Math.min(window.toldLow ?? Infinity, told.remaining);
		}
	}
	// An answer to a request of an earlier window: the server counted it in that window or, arriving
	// after its end, in this one (its reset says which). The ended window's answers complete its measure.
	if (headers !== undefined && !current && status !== 429 && told.remaining !== undefined) {
		const counted = window.namesLaterThanEnded(told) ? 'here' : 'ended';
		// Counted in this window after its answers so far: what it has left is lower than they said.
		if (counted === 'here' && window.toldLow !== undefined && !window.namesLaterWindow(told))
			window.toldLow = Math.min(window.toldLow, told.remaining);
		window.share.stragglerAnswered(
			told.remaining,
			slot.seq,
			counted,
			slot.epoch === window.epoch - 1,
			now,
		);
	}
	if (slot.epoch === window.epoch - 1 && window.inFlightOf(slot.epoch) === 0)
		window.share.closeNow();
	// A 429 says the window is spent: markExhausted, which the caller calls next, records that and then
	// looks at the queue. A slot granted here would go into the spent window whatever it records (the
	// 429 to a request sent in an earlier window does not lower `remaining`). Without rate-limit headers
	// the estimate (span.ts) still looks here: it comes out worse without it (docs/rate-limits.md).
	if (status !== 429 || window.unpaced) found.pump();
}

/**
 * How many of this key's requests the service has answered on their merits so far (in this process):
 * while it grows, 429s are the key's pace, not a service that has stopped serving it.
 */
export function keyProgress(name: string): number {
	return keys.get(name)?.progress ?? 0;
}

/** A slot given back unused (the request was refused before sending): someone else may have it. */
export function cancelSlot(key: string, slot: Slot): void {
	const found = keyFor(key);
	const window = found.window;
	window.answered(slot);
	if (window.unpaced) {
		if (!slot.probe) window.span.refund(slot.sentAt ?? 0);
	} else if (!slot.probe && slot.epoch === window.epoch && window.remaining !== undefined)
		window.remaining++;
	found.pump();
}

/**
 * A 429: the window is spent until its Retry-After or reset (`fallback` when it names neither, or
 * names a time already past); every request of this key waits for it. Returns that time.
 * `slot`: the request refused (when it went: see serverClockOffset; which window it was sent in).
 */
export function markExhausted(
	key: string,
	headers: HeaderBag,
	fallback: number,
	now = currentTime(),
	slot?: Slot,
): number {
	const found = keyFor(key, now);
	const window = found.window;
	const told = readRateLimitHeaders(headers, now, slot?.sentAt ?? now);
	// A request of an ended window refused with that window's reset: it says nothing of this one.
	if (
		slot !== undefined &&
		slot.epoch < window.epoch &&
		!window.unpaced &&
		told.resetAt !== undefined &&
		!window.namesLaterThanEnded(told)
	) {
		found.pump();
		return window.remaining === 0 && window.resetAt !== undefined ? window.resetAt : now;
	}
	let until = window.exhaustedUntil(told) ?? fallback;
	if (until <= now) until = fallback;
	// A 429 of the window this process knows the end of (a whole-second reset it has learnt to read
	// exactly) says the window is spent, not that it lasts longer: its Retry-After is rounded up.
	const named = window.namedReset;
	if (
		window.resetAt !== undefined &&
		window.resetAt > now &&
		told.resetAt !== undefined &&
		named !== undefined &&
		Math.abs(told.resetAt - named) < 1000
	)
		until = Math.min(until, window.resetAt);
	if (window.unpaced) window.span.learn(until);
	window.remaining = 0;
	if (until > (window.resetAt ?? 0)) {
		window.resetAt = until;
		// The wait no longer ends where a whole-second window would: not the moment to test it.
		window.testDue = undefined;
	}
	found.pump();
	return until;
}

/** For tests: forget windows idle for longer than the expiry, as the periodic sweep does. */
export function sweepRateLimitState(now: number): void {
	lastSweep = 0;
	sweep(now);
}

/** For tests: forget every window. */
export function resetRateLimitState(): void {
	for (const key of keys.values()) key.alarm.cancel();
	keys.clear();
	lastSweep = 0;
}
