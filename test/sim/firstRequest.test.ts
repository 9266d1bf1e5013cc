/**
 * A key's first request, before any answer has told how long answers take, on the virtual clock
 * (issue #65): a first request that hangs holds the items queued behind it 4.5 s, not 30; a
 * service slow to answer (4 s) still sees at most two requests before its first answer, no burst.
 */
import { runScenario } from './simulate';
import type { Scenario } from './scenario';

/** 30 Get Lead items of one process, 100 per minute, resets in epoch ms; `change` adds the fault. */
function firstOf(change: Partial<Scenario>): Scenario {
	return {
		seed: 65,
		kind: 'slow',
		limit: 100,
		windowMs: 60_000,
		aligned: false,
		reset: 'epoch-ms',
		rounding: 'up',
		limitHeader: true,
		retryAfter: 'seconds',
		skewMs: 0,
		latency: { min: 40, jitter: 10 },
		limitChanges: [],
		processes: [{ items: 30, startMs: 0, operation: 'get' }],
		startAt: Date.parse('2026-12-01T09:00:00.000Z'),
		...change,
	};
}

/** When each request reached the service, in ms from the scenario's start, in order. */
async function arrivals(scenario: Scenario) {
	const { result, timeline } = await runScenario(65, { scenario, timeline: true });
	const arrived = timeline!.filter((entry) => entry.event.startsWith('arrives'));
	return { result, times: arrived.map((entry) => entry.t - scenario.startAt) };
}

describe("a key's first request", () => {
	it('hanging 40 s with 29 items queued behind it: the others reach the server within about 5 s', async () => {
		// Until 2026-11-29 nothing went before the first answer or 30 s: every other item waited 30 s.
		const { result, times } = await arrivals(firstOf({ firstAnswerMs: 40_000 }));
		expect(result).toMatchObject({ lost: 0, duplicated: 0, items: 30, requests: 30 });
		expect(times).toHaveLength(30);
		expect(Math.max(...times)).toBeLessThanOrEqual(5_000);
	});

	it('on a service that answers in 4 s: at most two requests reach it before its first answer', async () => {
		const scenario = firstOf({ slow: { min: 4_000, max: 4_000 } });
		const { result, timeline } = await runScenario(65, { scenario, timeline: true });
		expect(result).toMatchObject({ lost: 0, duplicated: 0, items: 30, rateLimitedAll: 0 });
		const firstAnswer = 4_000 + scenario.latency.min;
		const before = timeline!.filter(
			(entry) => entry.event.startsWith('arrives') && entry.t - scenario.startAt < firstAnswer,
		);
		expect(before.length).toBeGreaterThanOrEqual(1);
		expect(before.length).toBeLessThanOrEqual(2);
	});
});
