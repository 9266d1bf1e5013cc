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
	hit(bucket: string, now: number, config: Pick<SandboxConfig, 'rateLimit' | 'windowMs'>): WindowState {
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

/** Whole seconds until `resetAt`, rounded up and at least 1: a client waiting that long is never early. */
export const secondsUntil = (resetAt: number, now: number) => Math.max(1, Math.ceil((resetAt - now) / 1000));

export function formatReset(resetAt: number, now: number, format: SandboxConfig['resetFormat']): string {
	switch (format) {
		case 'epoch-s':
			return String(Math.ceil(resetAt / 1000));
		case 'epoch-ms':
			return String(resetAt);
		case 'delta-s':
			return String(secondsUntil(resetAt, now));
		case 'http-date':
			// HTTP dates have whole seconds: round up so the date is never before the real reset.
			return new Date(Math.ceil(resetAt / 1000) * 1000).toUTCString();
	}
}

export function rateLimitHeaders(
	state: Pick<WindowState, 'limit' | 'remaining' | 'resetAt'>,
	now: number,
	format: SandboxConfig['resetFormat'],
): Record<string, string> {
	return {
		'X-RateLimit-Limit': String(state.limit),
		'X-RateLimit-Remaining': String(state.remaining),
		'X-RateLimit-Reset': formatReset(state.resetAt, now, format),
	};
}
