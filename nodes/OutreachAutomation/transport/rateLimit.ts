import { createHash } from 'crypto';
import { sleep } from 'n8n-workflow';

import { MAX_SINGLE_WAIT_MS, RESET_MARGIN_MS } from './constants';

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

export function readRateLimitHeaders(headers: HeaderBag, now = Date.now()): RateLimitHeaders {
	const remainingRaw = header(headers, 'x-ratelimit-remaining');
	const remaining =
		remainingRaw !== undefined && /^\d+$/.test(remainingRaw) ? Number(remainingRaw) : undefined;
	return {
		remaining,
		resetAt: parseResetHeader(header(headers, 'x-ratelimit-reset'), now),
		retryAt: parseRetryAfter(header(headers, 'retry-after'), now),
	};
}

/**
 * What the server last told us about one API key's window, shared by every request of this
 * process that uses the same credential (RoutingNode fires all input items at once).
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
	/** Set when the server sends no rate-limit headers: nothing to pace by, 429s are retried. */
	unpaced = false;
	private waiters: Array<() => void> = [];

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

/** Windows are keyed by a hash of base URL and key: the key itself is never kept in memory here. */
export function windowKey(baseUrl: string, apiKey: string): string {
	return createHash('sha256').update(`${baseUrl}\u0000${apiKey}`).digest('hex');
}

function windowFor(key: string): Window {
	let window = windows.get(key);
	if (!window) {
		window = new Window();
		windows.set(key, window);
	}
	return window;
}

export interface Slot {
	probe: boolean;
	epoch: number;
	/** Set instead of a slot when the reset is further away than we may wait. */
	tooLongUntil?: number;
}

/** Waits until a request may be sent without exceeding the window. */
export async function acquireSlot(key: string): Promise<Slot> {
	const window = windowFor(key);
	for (;;) {
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
			await sleep(resetAt - now + RESET_MARGIN_MS);
			continue;
		}
		if (window.unpaced) return window.send(false);
		if (window.remaining === undefined) {
			if (!window.probing) {
				window.probing = true;
				return window.send(true);
			}
			await window.waitForProbe();
			continue;
		}
		window.remaining--;
		return window.send(false);
	}
}

/** Feeds a response's headers (any status, or none after a network error) back into the window. */
export function releaseSlot(key: string, slot: Slot, headers: HeaderBag, now = Date.now()): void {
	const window = windowFor(key);
	window.answered(slot);
	const told = readRateLimitHeaders(headers, now);
	// An answer to a request of an earlier window speaks of that window (often "0 left"): not of this one.
	const current = slot.epoch === window.epoch;
	if (headers !== undefined && current) {
		if (told.remaining === undefined) {
			// A response without the headers (e.g. a proxy's own 429): stop pacing until they return.
			window.unpaced = slot.probe ? true : window.unpaced;
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
	window.remaining = 0;
	window.resetAt = Math.max(window.resetAt ?? 0, until);
}

/** For tests: forget every window. */
export function resetRateLimitState(): void {
	windows.clear();
}
