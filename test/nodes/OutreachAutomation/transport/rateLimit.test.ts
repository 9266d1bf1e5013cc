import { parseResetHeader, parseRetryAfter, readRateLimitHeaders } from '../../../../nodes/OutreachAutomation/transport/rateLimit';

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
		expect(readRateLimitHeaders({ 'x-ratelimit-remaining': 'lots' }, NOW).remaining).toBeUndefined();
	});

	it('Retry-After as seconds or date', () => {
		expect(parseRetryAfter('3', NOW)).toBe(NOW + 3000);
		expect(parseRetryAfter('Sun, 22 Nov 2026 10:00:09 GMT', NOW)).toBe(NOW + 9000);
	});

	it('reads headers case-insensitively, arrays included', () => {
		expect(readRateLimitHeaders({ 'X-RateLimit-Remaining': ['7'], 'X-RATELIMIT-RESET': '12', 'Retry-After': '2' }, NOW)).toEqual({
			remaining: 7,
			resetAt: NOW + 12_000,
			retryAt: NOW + 2000,
		});
	});
});
