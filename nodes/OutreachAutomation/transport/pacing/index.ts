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
 */
import { createHash } from 'crypto';
import { sleep } from 'n8n-workflow';

import { MAX_SINGLE_WAIT_MS, WINDOW_IDLE_EXPIRY_MS } from '../constants';
import { readRateLimitHeaders, type HeaderBag, type RateLimitHeaders } from './headers';
import { Window, type Slot } from './window';

export {
	hasRateLimitHeaders,
	parseResetHeader,
	parseRetryAfter,
	readRateLimitHeaders,
	serverClockOffset,
	type RateLimitHeaders,
} from './headers';
export type { Slot } from './window';

/** Resolves when `signal` aborts (never when there is none). */
export function aborted(signal: AbortSignal | undefined): Promise<void> {
	return new Promise((resolve) => {
		if (!signal) return;
		if (signal.aborted) resolve();
		else signal.addEventListener('abort', () => resolve(), { once: true });
	});
}

/** `sleep` that ends at once when the execution is cancelled; never a negative time. */
export async function pause(ms: number, signal?: AbortSignal): Promise<void> {
	if (signal?.aborted) return;
	await Promise.race([sleep(Math.max(0, ms)), aborted(signal)]);
}

const windows = new Map<string, Window>();
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
	for (const [key, window] of windows) {
		if (window.idle && now - window.lastUsed > WINDOW_IDLE_EXPIRY_MS) windows.delete(key);
	}
}

function windowFor(key: string, now = Date.now()): Window {
	sweep(now);
	let window = windows.get(key);
	if (!window) {
		window = new Window();
		windows.set(key, window);
	}
	window.lastUsed = now;
	return window;
}

/** For tests: what this process knows of a key's window (undefined when it knows nothing). */
export function peekWindow(key: string): Window | undefined {
	return windows.get(key);
}

/** For tests: how many windows are remembered. */
export function rememberedWindows(): number {
	return windows.size;
}

/** Waits until `until` (or `stop`), or answers "too long" when that is further than we may wait. */
async function waitUntil(
	window: Window,
	until: number,
	stop: Promise<void>,
): Promise<Slot | undefined> {
	const now = Date.now();
	if (until - now > MAX_SINGLE_WAIT_MS)
		return { probe: false, epoch: window.epoch, seq: 0, tooLongUntil: until };
	await Promise.race([sleep(Math.max(0, until - now)), stop]);
	return undefined;
}

/** Waits for the next answer or `until` (default: the window's reset), whichever comes first. */
async function nextAnswer(
	window: Window,
	stop: Promise<void>,
	until = window.resetAt,
): Promise<void> {
	if (until !== undefined) window.alarm(until);
	await Promise.race([window.change(), stop]);
}

/** Waits until a request may be sent without exceeding the window; undefined once `signal` aborts. */
export async function acquireSlot(key: string, signal?: AbortSignal): Promise<Slot | undefined> {
	const window = windowFor(key);
	window.waiting++;
	try {
		return await acquire(window, signal);
	} finally {
		window.waiting--;
	}
}

async function acquire(window: Window, signal: AbortSignal | undefined): Promise<Slot | undefined> {
	// One listener on the execution's signal per request, however often it waits.
	const stop = aborted(signal);
	for (;;) {
		if (signal?.aborted) return undefined;
		const now = Date.now();
		if (window.resetAt !== undefined && now >= window.resetAt) window.roll();
		if (window.remaining !== undefined && window.remaining <= 0) {
			// Counting own requests in flight against answers that arrived out of order can reach 0
			// early: with none in flight, the server's own figure is exact again.
			if (window.inFlightNow() > 0 && (window.toldLow ?? 0) > 0) {
				await nextAnswer(window, stop);
				continue;
			}
			if ((window.toldLow ?? 0) > 0 && window.share.alone()) {
				window.remaining = window.toldLow;
				continue;
			}
			const tooLong = await waitUntil(window, window.resetAt ?? now + 1000, stop);
			if (tooLong) return tooLong;
			continue;
		}
		if (window.unpaced) {
			const span = window.span;
			if (now >= span.end()) span.openAt(now);
			// Until a 429 has taught the limit, grow as slow start does rather than burst the assumed one.
			const learning = !span.learnt && window.inFlightNow() >= window.share.cwnd;
			if (!learning && span.take()) return window.send(false);
			if (learning) {
				await Promise.race([window.change(), stop]);
				continue;
			}
			// In steps: a 429 may meanwhile teach a shorter span than the one assumed.
			const spanEnd = span.start + span.spanMs;
			if (spanEnd - now > MAX_SINGLE_WAIT_MS)
				return { probe: false, epoch: window.epoch, seq: 0, tooLongUntil: spanEnd };
			await Promise.race([sleep(Math.max(0, Math.min(spanEnd - now, 1000))), stop]);
			continue;
		}
		if (window.remaining === undefined) {
			if (!window.probing) {
				window.probing = true;
				return window.send(true);
			}
			await Promise.race([window.change(), stop]);
			continue;
		}
		const inFlight = window.inFlightNow();
		const left = window.remaining + inFlight;
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
				(window.coarse ? named - 1000 : Math.min(window.resetAt, named)) - window.spreadMargin();
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
			const demand = window.waiting + inFlight;
			if (!alone && window.resetAt !== undefined && demand > Math.floor(left / sharers)) {
				if (now < window.nextSendAt) {
					await nextAnswer(window, stop, Math.min(window.nextSendAt, window.resetAt));
					continue;
				}
				window.nextSendAt = now + gap;
			}
			window.remaining--;
			const slot = window.send(false);
			// Fewer left than processes on the key: a request that may find the window spent.
			if (left < Math.ceil(sharers) && !alone) slot.last = true;
			return slot;
		}
		// Our share is in flight: the next answer says more. With none in flight, the rest of this
		// window is the others'.
		if (inFlight > 0) await nextAnswer(window, stop);
		else {
			const tooLong = await waitUntil(window, window.resetAt ?? now + 1000, stop);
			if (tooLong) return tooLong;
		}
	}
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
	now = Date.now(),
	status?: number,
): void {
	const window = windowFor(key);
	window.answered(slot, now);
	const told = readRateLimitHeaders(headers, now);
	// An answer to a request of an earlier window speaks of that window (often "0 left"): not of this one.
	const current = slot.epoch === window.epoch;
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
			window.limit = Math.max(window.limit, told.limit ?? 0, told.remaining + 1);
			window.share.limit = window.limit;
			// What the server has left, less our own requests it will count after this one.
			const left = told.remaining - window.sentAfter(slot);
			const later = (told.resetAt ?? 0) > (window.namedReset ?? Infinity) + 1000;
			if (slot.probe) {
				// Told one less than the limit: its probe opened the window, about now.
				window.opened = status !== 429 && told.remaining >= window.limit - 1 ? now : undefined;
				window.share.carry(window.stragglers());
				adopt(window, told, left - window.stragglers(), now);
				window.share.started(window.remaining ?? 0);
			} else if (later && window.remaining !== undefined && left > window.remaining) {
				// The server started a new window before the one we knew ended: take it as it is (told
				// one less than the limit, this request opened it, as a probe would have).
				window.roll();
				window.opened = status !== 429 && told.remaining >= window.limit - 1 ? now : undefined;
				adopt(window, told, left, now);
			} else if (window.remaining !== undefined) {
				window.remaining = Math.min(window.remaining, Math.max(0, left));
				if (
					told.remaining === 0 &&
					told.resetAt !== undefined &&
					told.resetAt > (window.namedReset ?? 0)
				)
					window.setReset(told, now);
			}
			if (status !== 429) window.share.answered(told.remaining, slot.seq, false, now);
			window.toldLow = Math.min(window.toldLow ?? Infinity, told.remaining);
		}
	}
	// An answer of the window that just ended: it completes that window's measure.
	if (headers !== undefined && slot.epoch === window.epoch - 1 && status !== 429) {
		const told2 = told.remaining;
		if (told2 !== undefined) window.share.answered(told2, slot.seq, true, now);
		if (window.inFlightOf(slot.epoch) === 0) window.share.closeNow();
	}
	if (slot.probe) window.probing = false;
	window.wake();
}

/** A slot given back unused (the request was refused before sending): someone else may have it. */
export function cancelSlot(key: string, slot: Slot): void {
	const window = windowFor(key);
	window.answered(slot);
	if (slot.probe) window.probing = false;
	else if (slot.epoch === window.epoch && window.remaining !== undefined) window.remaining++;
	window.wake();
}

/**
 * A 429: the window is spent until its Retry-After or reset (`fallback` when it names neither, or
 * names a time already past); every request of this key waits for it. Returns that time.
 */
export function markExhausted(
	key: string,
	headers: HeaderBag,
	fallback: number,
	now = Date.now(),
): number {
	const window = windowFor(key);
	const told = readRateLimitHeaders(headers, now);
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
	window.wake();
	return until;
}

/** For tests: forget windows idle for longer than the expiry, as the periodic sweep does. */
export function sweepRateLimitState(now: number): void {
	lastSweep = 0;
	sweep(now);
}

/** For tests: forget every window. */
export function resetRateLimitState(): void {
	windows.clear();
	lastSweep = 0;
}
