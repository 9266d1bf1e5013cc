/** Fixed-window rate limiting per API key, and the X-RateLimit-* headers in each reset format. */
import type { SandboxConfig } from './schemas';

export interface WindowState {
	allowed: boolean;
	limit: number;
	remaining: number;
	/** Epoch ms when the current window ends. */
	resetAt: number;
}

export class RateLimiter {
	private readonly windows = new Map<string, { start: number; count: number }>();

	/** Counts one request against `bucket`; a request over the limit is counted but not allowed. */
	hit(
		bucket: string,
		now: number,
		config: Pick<SandboxConfig, 'rateLimit' | 'windowMs'>,
	): WindowState {
		let window = this.windows.get(bucket);
		if (!window || now >= window.start + config.windowMs) {
			window = { start: now, count: 0 };
			this.windows.set(bucket, window);
		}
		window.count++;
		return {
			allowed: window.count <= config.rateLimit,
			limit: config.rateLimit,
			remaining: Math.max(0, config.rateLimit - window.count),
			resetAt: window.start + config.windowMs,
		};
	}

	clear(): void {
		this.windows.clear();
	}
}

/** The header settings: reset format, rounding of 1-second values, the server clock's skew, which headers. */
export type HeaderConfig = Pick<
	SandboxConfig,
	'resetFormat' | 'resetRounding' | 'clockSkewMs' | 'rateHeaders' | 'retryAfter'
>;
const CEIL: Pick<HeaderConfig, 'resetRounding' | 'clockSkewMs'> = {
	resetRounding: 'ceil',
	clockSkewMs: 0,
};

const roundMs = (ms: number, rounding: HeaderConfig['resetRounding']) =>
	rounding === 'floor' ? Math.floor(ms / 1000) : Math.ceil(ms / 1000);

/**
 * Whole seconds until `resetAt`. Rounded up (at least 1), a client waiting that long is never early; rounded
 * down (at least 0), as some servers do, it may be up to a second early.
 */
export function secondsUntil(
	resetAt: number,
	now: number,
	rounding: HeaderConfig['resetRounding'] = 'ceil',
): number {
	return rounding === 'floor'
		? Math.max(0, roundMs(resetAt - now, 'floor'))
		: Math.max(1, roundMs(resetAt - now, 'ceil'));
}

/**
 * X-RateLimit-Reset in `format`. Absolute values are read off the server's clock, which clockSkewMs sets off
 * from the real one; relative values (delta-s) do not depend on it.
 */
export function formatReset(
	resetAt: number,
	now: number,
	format: SandboxConfig['resetFormat'],
	{ resetRounding, clockSkewMs }: Pick<HeaderConfig, 'resetRounding' | 'clockSkewMs'> = CEIL,
): string {
	const serverResetAt = resetAt + clockSkewMs;
	switch (format) {
		case 'epoch-s':
			return String(roundMs(serverResetAt, resetRounding));
		case 'epoch-ms':
			return String(serverResetAt);
		case 'delta-s':
			return String(secondsUntil(resetAt, now, resetRounding));
		case 'http-date':
			// HTTP dates have whole seconds: rounded up, the date is never before the real reset.
			return new Date(roundMs(serverResetAt, resetRounding) * 1000).toUTCString();
	}
}

export function rateLimitHeaders(
	state: Pick<WindowState, 'limit' | 'remaining' | 'resetAt'>,
	now: number,
	config: Pick<HeaderConfig, 'resetFormat'> & Partial<HeaderConfig>,
): Record<string, string> {
	if (config.rateHeaders === 'none') return {};
	return {
		// 'spec': only the two headers the API documents; no X-RateLimit-Limit.
		...(config.rateHeaders === 'spec' ? {} : { 'X-RateLimit-Limit': String(state.limit) }),
		'X-RateLimit-Remaining': String(state.remaining),
		'X-RateLimit-Reset': formatReset(state.resetAt, now, config.resetFormat, {
			...CEIL,
			...config,
		}),
	};
}

/** Retry-After of a 429 (seconds, or an HTTP date on the server's clock), or nothing. */
export function retryAfterHeader(
	resetAt: number,
	now: number,
	config: HeaderConfig,
): Record<string, string> {
	switch (config.retryAfter) {
		case 'none':
			return {};
		case 'http-date':
			return {
				'Retry-After': new Date(
					roundMs(resetAt + config.clockSkewMs, config.resetRounding) * 1000,
				).toUTCString(),
			};
		case 'seconds':
			return { 'Retry-After': String(secondsUntil(resetAt, now, config.resetRounding)) };
	}
}
