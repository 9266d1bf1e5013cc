import {
	parseResetHeader,
	parseRetryAfter,
	readRateLimitHeaders,
} from '../../../../../nodes/OutreachAutomation/transport/pacing';

const NOW = Date.parse('2026-11-22T10:00:00.000Z');

describe('rate-limit headers', () => {
	it.each([
		['epoch seconds', '1795356030', 1795356030_000],
		['epoch milliseconds', '1795356030250', 1795356030250],
		['seconds to wait', '42', NOW + 42_000],
		['fractional seconds to wait', '0.5', NOW + 500],
		['HTTP date', 'Sun, 22 Nov 2026 10:01:05 GMT', Date.parse('2026-11-22T10:01:05Z')],
	])('X-RateLimit-Reset as %s', (_name, value, expected) => {
		expect(parseResetHeader(value, NOW)).toBe(expected);
	});

	it('ignores what it cannot read', () => {
		expect(parseResetHeader(undefined, NOW)).toBeUndefined();
		expect(parseResetHeader('soon', NOW)).toBeUndefined();
		expect(
			readRateLimitHeaders({ 'x-ratelimit-remaining': 'lots' }, NOW).remaining,
		).toBeUndefined();
	});

	it('Retry-After as seconds or date', () => {
		expect(parseRetryAfter('3', NOW)).toBe(NOW + 3000);
		expect(parseRetryAfter('Sun, 22 Nov 2026 10:00:09 GMT', NOW)).toBe(NOW + 9000);
	});

	it('reads headers case-insensitively, arrays included', () => {
		expect(
			readRateLimitHeaders(
				{ 'X-RateLimit-Remaining': ['7'], 'X-RATELIMIT-RESET': '12', 'Retry-After': '2' },
				NOW,
			),
		).toEqual({
			remaining: 7,
			// Named in whole seconds: the pacer learns whether the server rounds them up or down.
			resetAt: NOW + 12_000,
			resetCoarse: true,
			retryAt: NOW + 2000,
		});
	});

	it('a reset in whole seconds (epoch seconds, HTTP date, seconds to wait) is marked coarse; epoch ms and fractions are exact', () => {
		const read = (reset: string) => readRateLimitHeaders({ 'x-ratelimit-reset': reset }, NOW);
		expect(read(String(NOW / 1000 + 12))).toEqual({ resetAt: NOW + 12_000, resetCoarse: true });
		expect(read(new Date(NOW + 12_000).toUTCString())).toEqual({
			resetAt: NOW + 12_000,
			resetCoarse: true,
		});
		expect(read('12')).toEqual({ resetAt: NOW + 12_000, resetCoarse: true });
		// An instant reads the same in every answer of its window; seconds to wait, counted from each
		// answer's arrival, do not.
		expect(read(String(NOW + 12_000))).toEqual({ resetAt: NOW + 12_000, resetFixed: true });
		expect(read(String(NOW / 1000 + 12.5))).toEqual({ resetAt: NOW + 12_500, resetFixed: true });
		expect(read('12.5')).toEqual({ resetAt: NOW + 12_500 });
	});

	it('an instant moved by a skewed server clock (read from Date, whole seconds) is not fixed, and says so', () => {
		const told = readRateLimitHeaders(
			{ 'x-ratelimit-reset': String(NOW + 12_000), date: new Date(NOW + 5_000).toUTCString() },
			NOW,
		);
		expect(told).toEqual({ resetAt: NOW + 7_000, skewed: true });
	});

	it('an answer read seconds after the server wrote it (a busy process) is not a clock behind ours', () => {
		const headers = {
			'x-ratelimit-reset': String(NOW + 1_000),
			date: new Date(NOW).toUTCString(),
		};
		// Sent at NOW, read 7 s later: the server's Date lies in between.
		expect(readRateLimitHeaders(headers, NOW + 7_000, NOW)).toEqual({
			resetAt: NOW + 1_000,
			resetFixed: true,
		});
		// Without the sending time the same answer reads as a clock at least 6 s behind.
		expect(readRateLimitHeaders(headers, NOW + 7_000).resetAt).toBe(NOW + 7_000);
		// A Date older than the request itself is skew.
		expect(readRateLimitHeaders(headers, NOW + 7_000, NOW + 5_000).resetAt).toBe(NOW + 5_000);
	});

	it('a negative remaining reads as nothing left; an absurd or unreadable one as unknown', () => {
		const remaining = (value: string) =>
			readRateLimitHeaders({ 'x-ratelimit-remaining': value }, NOW).remaining;
		expect(remaining('-3')).toBe(0);
		expect(remaining('0')).toBe(0);
		expect(remaining('99')).toBe(99);
		expect(remaining('99999999999')).toBeUndefined();
		expect(remaining('1e3')).toBeUndefined();
	});
});
