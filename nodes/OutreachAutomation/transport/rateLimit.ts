import { createHash } from 'crypto';
import { sleep } from 'n8n-workflow';

import {
	ASSUMED_RATE_LIMIT,
	ASSUMED_WINDOW_MS,
	MAX_SINGLE_WAIT_MS,
	RESET_MARGIN_MS,
	WINDOW_IDLE_EXPIRY_MS,
} from './constants';

type HeaderBag = Record<string, unknown> | undefined;

function header(headers: HeaderBag, name: string): string | undefined {
	if (!headers) return undefined;
	const wanted = name.toLowerCase();
	for (const [key, value] of Object.entries(headers)) {
		if (key.toLowerCase() !== wanted) continue;
		const first = Array.isArray(value) ? value[0] : value;
		return first === undefined || first === null ? undefined : String(first).trim();
	}
	return undefined;
}

/**
 * `X-RateLimit-Reset` in any of the forms servers use: epoch seconds, epoch milliseconds,
 * seconds to wait, or an HTTP date. Returns the reset instant in epoch milliseconds.
 */
export function parseResetHeader(value: string | undefined, now: number): number | undefined {
	if (value === undefined || value === '') return undefined;
	if (/^\d+(\.\d+)?$/.test(value)) {
		const n = Number(value);
		if (n >= 1e12) return n; // epoch milliseconds
		if (n >= 1e9) return n * 1000; // epoch seconds
		return now + n * 1000; // seconds to wait
	}
	const date = Date.parse(value);
	return Number.isNaN(date) ? undefined : date;
}

/** `Retry-After`: seconds to wait or an HTTP date. Returns epoch milliseconds. */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
	if (value === undefined || value === '') return undefined;
	if (/^\d+(\.\d+)?$/.test(value)) return now + Number(value) * 1000;
	const date = Date.parse(value);
	return Number.isNaN(date) ? undefined : date;
}

export interface RateLimitHeaders {
	remaining?: number;
	resetAt?: number;
	retryAt?: number;
}

/**
 * Whole seconds (an HTTP date, integer epoch seconds or seconds to wait): the server may have rounded
 * down, so the reset can be up to a second later than said. Epoch milliseconds and fractions are exact.
 */
function wholeSeconds(value: string): boolean {
	return /[a-z]/i.test(value) || (/^\d+$/.test(value) && Number(value) < 1e12);
}

/** A server clock this far from ours is skewed; below it, the `Date` header's 1-s resolution is noise. */
const SKEW_TOLERANCE_MS = 2000;

/**
 * How far the server's clock is ahead of ours, from its `Date` header (0 when unknown or close):
 * absolute reset times are shifted by it, so a server a few seconds off still makes us wait.
 */
export function serverClockOffset(headers: HeaderBag, now: number): number {
	const date = Date.parse(header(headers, 'date') ?? '');
	if (Number.isNaN(date)) return 0;
	const offset = date - now;
	return Math.abs(offset) > SKEW_TOLERANCE_MS ? offset : 0;
}

function absolute(value: string | undefined): boolean {
	return value !== undefined && !/^\d+(\.\d+)?$/.test(value)
		? true
		: value !== undefined && Number(value) >= 1e9;
}

export function readRateLimitHeaders(headers: HeaderBag, now = Date.now()): RateLimitHeaders {
	const remainingRaw = header(headers, 'x-ratelimit-remaining');
	const remaining =
		remainingRaw !== undefined && /^\d+$/.test(remainingRaw) ? Number(remainingRaw) : undefined;
	const offset = serverClockOffset(headers, now);
	const at = (value: string | undefined, parse: typeof parseResetHeader, coarse: boolean) => {
		let instant = parse(value, now);
		if (instant === undefined || value === undefined) return undefined;
		if (absolute(value)) instant -= offset;
		// Possibly rounded down: waiting one more second costs less than a 429.
		if (coarse && wholeSeconds(value)) instant += 1000;
		return instant;
	};
	const retryAfter = header(headers, 'retry-after');
	return {
		remaining,
		resetAt: at(header(headers, 'x-ratelimit-reset'), parseResetHeader, true),
		// Retry-After in seconds follows the rest of a 429's pacing (a second more per 429 would
		// slow the headerless estimate); as an HTTP date it is absolute and may be truncated.
		retryAt: at(retryAfter, parseRetryAfter, retryAfter !== undefined && /[a-z]/i.test(retryAfter)),
	};
}

/** Whether an answer carries the rate-limit headers at all. */
export function hasRateLimitHeaders(headers: HeaderBag): boolean {
	return header(headers, 'x-ratelimit-remaining') !== undefined;
}

/** Resolves when `signal` aborts (never when there is none). */
export function aborted(signal: AbortSignal | undefined): Promise<void> {
	return new Promise((resolve) => {
		if (!signal) return;
		if (signal.aborted) resolve();
		else signal.addEventListener('abort', () => resolve(), { once: true });
	});
}

/** `sleep` that ends at once when the execution is cancelled. */
export async function pause(ms: number, signal?: AbortSignal): Promise<void> {
	if (signal?.aborted) return;
	await Promise.race([sleep(ms), aborted(signal)]);
}

/**
 * What the server last told us about one API key's window, shared by every request of this
 * process that uses the same credential (all input items start at once).
 *
 * Within a window we trust the smallest `remaining` seen and count our own sends against it.
 * When the reset time passes, the window is unknown again: one request goes first (the probe)
 * and the others wait for its headers, so a fresh window is never overrun by a burst.
 */
class Window {
	remaining: number | undefined;
	resetAt: number | undefined;
	probing = false;
	/** Counts windows seen; a slot remembers the one it was sent in. */
	epoch = 0;
	/** Requests sent and not yet answered, by the window they were sent in. */
	readonly inFlight = new Map<number, number>();
	/**
	 * Set when the server sends no rate-limit headers. Requests are then paced by an estimate: a
	 * budget per span, starting from the documented limit, learnt from each 429 (how many passed
	 * before it, and its Retry-After), raised again by a tenth after a span without one.
	 */
	unpaced = false;
	budget = ASSUMED_RATE_LIMIT;
	spanMs = ASSUMED_WINDOW_MS;
	spanStart = 0;
	spanSent = 0;
	spanPassed = 0;
	spanLimited = false;
	/**
	 * Whether a span is running. A span opens with its first request (as the server's window opens
	 * with the first request it counts), never at a nominal time: a span opened early drifts ahead of
	 * the server's window and runs into it.
	 */
	spanOpen = false;
	lastUsed = 0;
	private waiters: Array<() => void> = [];

	get idle(): boolean {
		return this.inFlight.size === 0 && this.waiters.length === 0 && !this.probing;
	}

	/**
	 * A 429 without rate-limit headers: what passed in this span is the budget, the span lasts until
	 * `until`, and the next one opens with the first request after it. Later 429s of the same burst
	 * only push that back (they say nothing about the span's length).
	 */
	learn(until: number) {
		if (this.spanOpen) {
			if (this.spanPassed > 0) this.budget = this.spanPassed;
			this.spanMs = Math.max(1000, until - this.spanStart);
			this.spanOpen = false;
		}
		this.spanStart = Math.max(this.spanStart, until);
		this.spanSent = 0;
		this.spanPassed = 0;
		this.spanLimited = true;
	}

	/** Opens a span with the request about to be sent; after a clean full span the estimate may be low. */
	openSpan(now: number) {
		if (this.spanOpen && !this.spanLimited && this.spanSent >= this.budget)
			this.budget += Math.max(1, Math.floor(this.budget / 10));
		this.spanStart = now;
		this.spanSent = 0;
		this.spanPassed = 0;
		this.spanLimited = false;
		this.spanOpen = true;
	}

	wake() {
		const waiters = this.waiters;
		this.waiters = [];
		for (const resolve of waiters) resolve();
	}

	async waitForProbe() {
		await new Promise<void>((resolve) => this.waiters.push(resolve));
	}

	send(probe: boolean): Slot {
		this.inFlight.set(this.epoch, (this.inFlight.get(this.epoch) ?? 0) + 1);
		return { probe, epoch: this.epoch };
	}

	answered(slot: Slot) {
		const left = (this.inFlight.get(slot.epoch) ?? 1) - 1;
		if (left > 0) this.inFlight.set(slot.epoch, left);
		else this.inFlight.delete(slot.epoch);
	}

	/** Requests of earlier windows still unanswered: the server may count them in this one. */
	stragglers(): number {
		let count = 0;
		for (const [epoch, n] of this.inFlight) if (epoch < this.epoch) count += n;
		return count;
	}
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

/** For tests: how many windows are remembered. */
export function rememberedWindows(): number {
	return windows.size;
}

export interface Slot {
	probe: boolean;
	epoch: number;
	/** Set instead of a slot when the reset is further away than we may wait. */
	tooLongUntil?: number;
}

/** Waits until a request may be sent without exceeding the window; undefined once `signal` aborts. */
export async function acquireSlot(key: string, signal?: AbortSignal): Promise<Slot | undefined> {
	const window = windowFor(key);
	for (;;) {
		if (signal?.aborted) return undefined;
		const now = Date.now();
		if (window.resetAt !== undefined && now >= window.resetAt) {
			window.remaining = undefined;
			window.resetAt = undefined;
			window.epoch++;
		}
		if (window.remaining !== undefined && window.remaining <= 0) {
			const resetAt = window.resetAt ?? now + 1000;
			if (resetAt - now > MAX_SINGLE_WAIT_MS)
				return { probe: false, epoch: window.epoch, tooLongUntil: resetAt };
			await pause(resetAt - now + RESET_MARGIN_MS, signal);
			continue;
		}
		if (window.unpaced) {
			const spanEnd = window.spanOpen ? window.spanStart + window.spanMs : window.spanStart;
			if (now >= spanEnd) window.openSpan(now);
			if (window.spanSent < window.budget) {
				window.spanSent++;
				return window.send(false);
			}
			const until = window.spanStart + window.spanMs;
			if (until - now > MAX_SINGLE_WAIT_MS)
				return { probe: false, epoch: window.epoch, tooLongUntil: until };
			// In steps: a 429 may meanwhile teach a shorter span than the one assumed.
			await pause(Math.min(until - now, 1000), signal);
			continue;
		}
		if (window.remaining === undefined) {
			if (!window.probing) {
				window.probing = true;
				return window.send(true);
			}
			await Promise.race([window.waitForProbe(), aborted(signal)]);
			continue;
		}
		window.remaining--;
		return window.send(false);
	}
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
	window.answered(slot);
	const told = readRateLimitHeaders(headers, now);
	// An answer to a request of an earlier window speaks of that window (often "0 left"): not of this one.
	const current = slot.epoch === window.epoch;
	if (window.unpaced && status !== undefined && status !== 429) window.spanPassed++;
	if (headers !== undefined && current) {
		if (told.remaining === undefined) {
			// Only an answer of the service itself (not a 429 or 5xx a proxy may have sent) says it has
			// no rate-limit headers; then pace by an estimate until they return.
			const answered = status === undefined || (status < 500 && status !== 429);
			if (slot.probe && answered && !window.unpaced) {
				window.unpaced = true;
				window.openSpan(now);
				window.spanSent = 1;
				window.spanPassed = 1;
			}
		} else {
			window.unpaced = false;
			const resetAt = told.resetAt ?? now + 1000;
			if (slot.probe) {
				window.remaining = Math.max(0, told.remaining - window.stragglers());
				window.resetAt = resetAt;
			} else if (window.remaining !== undefined) {
				window.remaining = Math.min(window.remaining, told.remaining);
				if (told.remaining === 0) window.resetAt = Math.max(window.resetAt ?? 0, resetAt);
			}
		}
	}
	if (slot.probe) {
		window.probing = false;
		window.wake();
	}
}

/** A slot given back unused (the request was refused before sending): someone else may have it. */
export function cancelSlot(key: string, slot: Slot): void {
	const window = windowFor(key);
	window.answered(slot);
	if (slot.probe) {
		window.probing = false;
		window.wake();
	} else if (slot.epoch === window.epoch && window.remaining !== undefined) {
		window.remaining++;
	}
}

/** A 429 says the window is spent until `until`: every request of this key waits for it. */
export function markExhausted(key: string, until: number): void {
	const window = windowFor(key);
	if (window.unpaced) window.learn(until);
	window.remaining = 0;
	window.resetAt = Math.max(window.resetAt ?? 0, until);
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
