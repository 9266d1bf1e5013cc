/** Pure readers of an answer's rate-limit headers (Remaining, Limit, Reset, Retry-After, Date). */
import { now as currentTime } from '../clock';

export type HeaderBag = Record<string, unknown> | undefined;

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

const NUMBER = /^\d+(\.\d+)?$/;

/** A time named as a number of seconds or an HTTP date, as epoch ms; `epochs`: large numbers are
 * epoch seconds or milliseconds rather than seconds to wait. */
function instant(value: string | undefined, now: number, epochs: boolean): number | undefined {
	if (value === undefined || value === '') return undefined;
	if (!NUMBER.test(value)) {
		const date = Date.parse(value);
		return Number.isNaN(date) ? undefined : date;
	}
	const n = Number(value);
	if (epochs && n >= 1e12) return n;
	if (epochs && n >= 1e9) return n * 1000;
	return now + n * 1000;
}

/** `X-RateLimit-Reset` as epoch seconds or ms, seconds to wait, or an HTTP date: epoch ms. */
export function parseResetHeader(value: string | undefined, now: number): number | undefined {
	return instant(value, now, true);
}

/** `Retry-After`: seconds to wait or an HTTP date. Returns epoch milliseconds. */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
	return instant(value, now, false);
}

export interface RateLimitHeaders {
	remaining?: number;
	/** The limit per window, when the server names it (`X-RateLimit-Limit`); only ever a hint. */
	limit?: number;
	/** The reset as named (never padded): see `resetCoarse`. */
	resetAt?: number;
	/** Named in whole seconds (integer epoch seconds, seconds to wait, an HTTP date): maybe rounded. */
	resetCoarse?: boolean;
	/** Exact, clock in step with ours: alike in every answer of a window (others vary up to 1 s). */
	resetFixed?: boolean;
	/** Moved by the server's clock skew, read from its `Date` to the second. */
	skewed?: boolean;
	retryAt?: number;
}

/** Whole seconds: an HTTP date, integer epoch seconds or seconds to wait. Epoch ms and fractions are exact. */
function wholeSeconds(value: string): boolean {
	return /[a-z]/i.test(value) || (/^\d+$/.test(value) && Number(value) < 1e12);
}

/** A server clock this far from ours is skewed; below it, the `Date` header's 1-s resolution is noise. */
const SKEW_TOLERANCE_MS = 2000;
/** More than any real service allows in one window: such a count is a fault, not a budget. */
const ABSURD_REMAINING = 1_000_000;
/** A `Date` header names whole seconds, rounded down. */
const DATE_RESOLUTION_MS = 1000;

/** How far the server's clock is ahead of ours by its `Date` (0 when unknown or close): stamped between
 * `sentAt` and `now`, only an offset outside that span and the header's second is skew. */
function serverClockOffset(headers: HeaderBag, now: number, sentAt = now): number {
	const date = Date.parse(header(headers, 'date') ?? '');
	if (Number.isNaN(date)) return 0;
	const atLeast = date - now;
	const atMost = date + DATE_RESOLUTION_MS - Math.min(sentAt, now);
	const offset = atLeast > 0 ? atLeast : atMost < 0 ? atMost : 0;
	return Math.abs(offset) > SKEW_TOLERANCE_MS ? offset : 0;
}

/** An instant on the server's clock (an HTTP date or epoch time), not a wait: skew applies. */
function absolute(value: string | undefined): boolean {
	return value !== undefined && (!NUMBER.test(value) || Number(value) >= 1e9);
}

/** A count header: negative reads as 0 (nothing left), absurdly large or unreadable as unknown. */
function count(raw: string | undefined): number | undefined {
	if (raw === undefined || !/^-?\d+$/.test(raw)) return undefined;
	const n = Number(raw);
	if (n > ABSURD_REMAINING) return undefined;
	return Math.max(0, n);
}

/** `sentAt`: when the request went, if known (see serverClockOffset). */
export function readRateLimitHeaders(
	headers: HeaderBag,
	now = currentTime(),
	sentAt = now,
): RateLimitHeaders {
	const offset = serverClockOffset(headers, now, sentAt);
	const at = (value: string | undefined, parse: typeof parseResetHeader) => {
		const instant = parse(value, now);
		if (instant === undefined || value === undefined) return undefined;
		return absolute(value) ? instant - offset : instant;
	};
	const reset = header(headers, 'x-ratelimit-reset');
	const resetAt = at(reset, parseResetHeader);
	const retryAfter = header(headers, 'retry-after');
	let retryAt = at(retryAfter, parseRetryAfter);
	// Retry-After as an HTTP date is absolute and may be truncated to the second: a second more costs
	// less than a 429. In seconds it follows the rest of a 429's pacing.
	if (retryAt !== undefined && retryAfter !== undefined && /[a-z]/i.test(retryAfter))
		retryAt += 1000;
	const result: RateLimitHeaders = {
		remaining: count(header(headers, 'x-ratelimit-remaining')),
		resetAt,
		retryAt,
	};
	const limit = count(header(headers, 'x-ratelimit-limit'));
	if (limit !== undefined && limit > 0) result.limit = limit;
	if (offset !== 0) result.skewed = true;
	if (resetAt !== undefined && reset !== undefined && wholeSeconds(reset))
		result.resetCoarse = true;
	else if (resetAt !== undefined && absolute(reset) && offset === 0) result.resetFixed = true;
	return result;
}
