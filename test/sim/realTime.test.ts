/**
 * The gates of the real-time pacing tests (test/nodes/OutreachAutomation/transport/pacing: processes,
 * volume, changes), on the virtual clock (issue #65): the same shapes, over seeds that vary the clock's
 * phase and the latency, on a quiet machine and on a loaded one (each process stalled now and then, as
 * a busy 2-core machine stalls it). Counts only; the real-time files keep smoke tests whose bounds a
 * loaded machine meets.
 */
import { runScenario } from './simulate';
import type { Scenario } from './scenario';

const SEEDS = Array.from({ length: 8 }, (_, i) => 6501 + i);

/** `processes` processes of `items` creates each on one key, exact resets; `loaded`: stalls. */
function shape(
	seed: number,
	change: Pick<Scenario, 'limit' | 'windowMs'> & { processes: number; items: number },
	loaded: boolean,
): Scenario {
	const processes = Array.from({ length: change.processes }, () => ({
		items: change.items,
		startMs: 0,
		operation: 'create' as const,
	}));
	return {
		seed,
		kind: 'exact',
		limit: change.limit,
		windowMs: change.windowMs,
		aligned: false,
		reset: 'epoch-ms',
		rounding: 'up',
		limitHeader: true,
		retryAfter: 'seconds',
		skewMs: 0,
		latency: { min: [4, 10, 40][seed % 3], jitter: [1, 5, 20][seed % 3] },
		limitChanges: [],
		processes,
		// Up to 3 stalls of 100-600 ms per process within the first three windows.
		stalls: loaded
			? processes.flatMap((_, host) =>
					[0, 1, 2].map((i) => ({
						host,
						at: ((seed * 7919 + i * 104_729 + host * 31) % 3) * change.windowMs + i * 137,
						ms: 100 + ((seed * 31 + i * 17 + host) % 6) * 100,
					})),
				)
			: undefined,
		startAt: Date.parse('2026-12-01T09:00:00.000Z') + ((seed * 389) % 1000),
	};
}

/** The windows the service counted own requests in. */
const windowsUsed = (service: { windows: Array<{ accepted: number[] }> }) =>
	service.windows.filter((w) => w.accepted.some((n) => n > 0)).length;

describe("the real-time pacing tests' gates, on the virtual clock", () => {
	const cases = SEEDS.flatMap((seed) => [
		[seed, false],
		[seed, true],
	]) as Array<[number, boolean]>;

	it.each(cases)(
		'seed %i (loaded: %s): one process alone, 800 creates at 100 per 2 s: in the 8 windows they need, at most 5%% 429s',
		async (seed, loaded) => {
			const scenario = shape(
				seed,
				{ limit: 100, windowMs: 2_000, processes: 1, items: 800 },
				loaded,
			);
			const { result, service } = await runScenario(seed, { scenario });
			expect(result).toMatchObject({ lost: 0, duplicated: 0, items: 800 });
			expect(result.rateLimitedAll / result.requests).toBeLessThanOrEqual(0.05);
			expect(windowsUsed(service)).toBe(8);
		},
	);

	it.each(cases)(
		'seed %i (loaded: %s): two processes sharing a key, 400 creates each at 100 per 2 s: 85%% of the limit used, at most 5%% 429s',
		async (seed, loaded) => {
			const scenario = shape(
				seed,
				{ limit: 100, windowMs: 2_000, processes: 2, items: 400 },
				loaded,
			);
			const { result, service } = await runScenario(seed, { scenario });
			expect(result).toMatchObject({ lost: 0, duplicated: 0, items: 800 });
			expect(result.rateLimitedAll / result.requests).toBeLessThanOrEqual(0.05);
			expect(800 / (windowsUsed(service) * 100)).toBeGreaterThanOrEqual(0.85);
		},
	);

	it.each(
		SEEDS.slice(0, 2).flatMap((seed) => [
			[seed, false],
			[seed, true],
		]) as Array<[number, boolean]>,
	)(
		'seed %i (loaded: %s): 10,000 creates in one process at 1,000 per 1-s window: 0 429s, one request per item',
		async (seed, loaded) => {
			const scenario = shape(
				seed,
				{ limit: 1_000, windowMs: 1_000, processes: 1, items: 10_000 },
				loaded,
			);
			const { result } = await runScenario(seed, { scenario });
			expect(result).toMatchObject({ lost: 0, duplicated: 0, items: 10_000 });
			expect(result.rateLimitedAll).toBe(0);
			expect(result.requests).toBe(10_000);
		},
		60_000,
	);

	it.each(cases)(
		'seed %i (loaded: %s): the limit raised from 50 to 200 a 1-s window mid-run: the new limit used (a window passes over 150), 0 429s',
		async (seed, loaded) => {
			const scenario = shape(
				seed,
				{ limit: 50, windowMs: 1_000, processes: 1, items: 1_000 },
				loaded,
			);
			scenario.limitChanges = [{ at: scenario.startAt + 2_500, limit: 200 }];
			const { result, service } = await runScenario(seed, { scenario });
			expect(result).toMatchObject({ lost: 0, duplicated: 0, items: 1_000, rateLimitedAll: 0 });
			expect(Math.max(...service.windows.map((w) => w.accepted[0]))).toBeGreaterThan(150);
		},
	);

	it.each(cases)(
		'seed %i (loaded: %s): the limit lowered from 100 to 20 a 1-s window mid-run: 429s only where the change met requests already sent',
		async (seed, loaded) => {
			const scenario = shape(
				seed,
				{ limit: 100, windowMs: 1_000, processes: 1, items: 300 },
				loaded,
			);
			const changeAt = scenario.startAt + 1_500;
			scenario.limitChanges = [{ at: changeAt, limit: 20 }];
			const { result, service } = await runScenario(seed, { scenario });
			expect(result).toMatchObject({ lost: 0, duplicated: 0, items: 300 });
			// From the window after the one the change met.
			const later = service.windows.filter((w) => w.start > changeAt);
			const requests = later.reduce((n, w) => n + w.accepted[0] + w.limited, 0);
			const refused = later.reduce((n, w) => n + w.limited, 0);
			expect(requests).toBeGreaterThanOrEqual(80);
			expect(refused).toBeLessThanOrEqual(Math.ceil(0.05 * requests));
		},
	);
});
