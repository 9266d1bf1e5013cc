/**
 * The simulator works: a fixed set of small scenarios, one of each kind, holds every invariant on the
 * pacing as it is (these seeds pass today; the whole run, with the scenarios that do not, is
 * `npm run simulate`, see docs/rate-limits.md "The simulator"), and a seed replays its run exactly.
 */
import { runScenario } from './simulate';
import { scenarioOf, KINDS, type Scenario } from './scenario';

/** Seeds that hold every invariant today, one or two per kind (each a few hundred requests at most). */
const PASSING = [12, 13, 3, 15, 5, 39, 7, 74, 75, 43, 44];

/**
 * The queue-mode test's shape: two n8n processes (hosts) of three executions of 100 creates each, one key
 * of 100 requests per 2 s with resets in whole seconds rounded up, each process stalled while its
 * executions start. `starts` per execution (the first three on host 0), `phase` the clock's ms.
 */
function queueShape(
	seed: number,
	starts: number[],
	stalls: NonNullable<Scenario['stalls']>,
	phase: number,
): Scenario {
	return {
		seed,
		kind: 'whole-second-up',
		limit: 100,
		windowMs: 2_000,
		aligned: false,
		reset: 'epoch-s',
		rounding: 'up',
		limitHeader: true,
		retryAfter: 'seconds',
		skewMs: 0,
		latency: { min: 20, jitter: 4 },
		limitChanges: [],
		processes: starts.map((startMs, i) => ({
			items: 100,
			startMs,
			operation: 'create' as const,
			host: i < 3 ? 0 : 1,
		})),
		stalls,
		startAt: Date.parse('2026-12-01T09:00:00.000Z') + phase,
	};
}

describe('the simulator', () => {
	it('covers every kind of service with the seeds below', () => {
		expect(new Set(PASSING.map((seed) => scenarioOf(seed).kind))).toEqual(new Set(KINDS));
	});

	it.each(PASSING)('seed %i holds every invariant', async (seed) => {
		const { result, service } = await runScenario(seed);
		expect(result.violations).toEqual([]);
		expect(result).toMatchObject({ ok: true, lost: 0, duplicated: 0 });
		// Every item reached the service, or met an injected fault on the way (a gateway's 502 never does).
		expect(result.requests + service.faulted.size).toBeGreaterThanOrEqual(result.items);
	});

	it('replays a seed exactly, request for request', async () => {
		// 2 processes sharing a key on whole-second resets, with 429s: timers, lots and jitter all count.
		const first = await runScenario(3, { timeline: true });
		const second = await runScenario(3, { timeline: true });
		expect(first.result.rateLimitedAll).toBeGreaterThan(0);
		expect(second.timeline).toEqual(first.timeline);
		expect(second.result).toEqual(first.result);
		expect(first.timeline!.length).toBeGreaterThan(first.result.requests);
	});

	it('a 429 is recorded before any further slot is granted (seed 246: 2 processes on HTTP-date resets)', async () => {
		// Until 2026-11-26, releaseSlot looked at the queue before request.ts's markExhausted recorded the
		// 429: the 429 of a request sent in an earlier window did not lower what the window had left, and
		// 357 slots went into spent windows: 417 429s, 5.8% avoidable. Now 181, 2.6%.
		const { result } = await runScenario(246);
		expect(result.violations).toEqual([]);
		expect(result.rateLimited / result.requests).toBeLessThanOrEqual(0.05);
	});

	it('a request refused again and again while its key keeps moving is not given up: seed 690 (64 processes and a foreign client) loses no item', async () => {
		// Until 2026-11-26 six 429s in a row failed an item however many other requests of its key were
		// answered meanwhile: 3 items here, 2,258 over the 2,001 scenarios. Now only 429s with no other
		// answer of the key in between count (9 items left in 4 scenarios, all of 64 processes).
		const { result } = await runScenario(690);
		expect(result).toMatchObject({ lost: 0, duplicated: 0 });
		expect(result.rateLimitedAll).toBeGreaterThan(result.items / 2);
	});

	it('a server without headers whose 429s name no time is waited out by the key, not hammered: seed 611 (8 processes) loses no item', async () => {
		// Until 2026-11-27 each request retried such a 429 on its own short backoff, and a span's length
		// was learnt from that guess: 1,409 requests (1,157 of them 429s) for 264 items, 12 items lost.
		const { result } = await runScenario(611);
		expect(scenarioOf(611)).toMatchObject({ kind: 'headerless', retryAfter: 'none' });
		expect(result).toMatchObject({ lost: 0, duplicated: 0 });
		expect(result.requests).toBeLessThan(2 * result.items);
	});

	it('without headers, processes that share a key converge on equal shares and use the limit: seed 17 (2 processes, 100 per 10 s)', async () => {
		// Until 2026-11-27 a 429 set the budget to what passed before it and clean spans raised it by a
		// tenth of itself: the split the first 429 left (6 to 28) held, 60% of the limit used, one process
		// starved. Now each spreads its span, every clean span adds the same step and every 429 takes 15%.
		const { result, measures } = await runScenario(17);
		expect(scenarioOf(17)).toMatchObject({ kind: 'headerless', processes: [{}, {}] });
		expect(result.violations).toEqual([]);
		expect(result).toMatchObject({ lost: 0, duplicated: 0 });
		expect(measures.used).toBeGreaterThanOrEqual(0.85);
	});

	it("a lone process on a server without rate-limit headers, 15 windows of work (the bench's scenario 6): within 1.10x the floor", async () => {
		// Until 2026-11-28 (84df160) a 429 near a span's end, whose Retry-After in whole seconds rounded
		// a tenth of a second up to one, lengthened every span after it to about 2 s and held the key for
		// that second; spread to the span's very end, its last requests opened the server's next window
		// early: 22.4 s where the limit allows 14 s (1.60x). The bench measured 19.5 s (1.30x).
		const scenario: Scenario = {
			seed: 1,
			kind: 'headerless',
			limit: 20,
			windowMs: 1_000,
			aligned: false,
			reset: 'none',
			rounding: 'up',
			limitHeader: false,
			retryAfter: 'seconds',
			skewMs: 0,
			latency: { min: 10, jitter: 5 },
			limitChanges: [],
			processes: [{ items: 300, startMs: 0, operation: 'create' }],
			startAt: Date.parse('2026-12-01T09:00:00.250Z'),
		};
		const { result } = await runScenario(1, { scenario });
		expect(result).toMatchObject({ lost: 0, duplicated: 0 });
		expect(result.wallMs).toBeLessThanOrEqual(1.1 * result.floorMs);
	});

	it('resets named in whole seconds rounded down: a window its process opened ends whole seconds after it opened, not a second after the named one: seed 1829 (3 processes) uses the limit', async () => {
		// Until 2026-11-28 every such window was waited out to a second after the named one: a second lost
		// per window (83% of the limit used).
		const { result, measures } = await runScenario(1829);
		expect(scenarioOf(1829)).toMatchObject({ kind: 'whole-second-down', processes: [{}, {}, {}] });
		expect(result.violations).toEqual([]);
		expect(measures.used).toBeGreaterThanOrEqual(0.85);
	});

	it('a reset in seconds to wait, rounded down, that a rounding test read as rounded up is unlearnt at the first probe refused in the old window: seed 1083 (16 processes, 100 a minute)', async () => {
		// Until 2026-11-28 such a misreading held: after every named second each process probed every
		// 100 ms into the old, spent window until it really ended, 746 of 5,130 requests answered 429
		// (14.5%). Now 28 of 4,412.
		const { result } = await runScenario(1083);
		expect(scenarioOf(1083)).toMatchObject({ kind: 'delta-s', rounding: 'down', windowMs: 60_000 });
		expect(result.violations).toEqual([]);
		expect(result.rateLimited / result.requests).toBeLessThanOrEqual(0.05);
	});

	it('answers slower than the window: windows are projected and each process sends a budget per window, learnt from the late answers: seed 97 (4 processes, 1,000 a second, answers in 1-2 s)', async () => {
		// Until 2026-11-28 each window waited for its probe's answer, which came after the window had
		// ended: one request per answer per process, 6,096 items in 2,557 s where the limit allows 8 s.
		// Now 20 s, 147 of 6,243 requests answered 429.
		const { result } = await runScenario(97);
		expect(scenarioOf(97)).toMatchObject({ kind: 'slow', windowMs: 1000, slow: { max: 2000 } });
		expect(result).toMatchObject({ lost: 0, duplicated: 0 });
		expect(result.wallMs).toBeLessThanOrEqual(3 * result.floorMs);
		expect(result.rateLimited / result.requests).toBeLessThanOrEqual(0.05);
	});

	it('without X-RateLimit-Limit, processes that start together do not each take the window for their own: seed 767 (64 processes, 1,000 a second, a foreign client)', async () => {
		// Until 2026-11-28 a process took its first answer's remaining + 1 for the limit, so the fall from
		// it showed no one else, and slow start began at a sixteenth of what was left: 64 processes sent
		// 62 each into a window of 1,000, 3,512 429s of 11,960 requests (29%). Now slow start begins at
		// two until the limit is told or seen over a whole window: 219 of 8,667 (2.5%).
		const { result } = await runScenario(767);
		expect(scenarioOf(767)).toMatchObject({ kind: 'foreign', limitHeader: false, limit: 1000 });
		expect(result.violations).toEqual([]);
		expect(result.rateLimited / result.requests).toBeLessThanOrEqual(0.05);
	});

	it('more processes than a window holds two requests each: a probe refused in a spent window waits a random number of windows, and no item is lost (seed 1893: 64 processes on 20 per 5 s)', async () => {
		// Until 2026-11-27 every process probed every window: 64 probes into 20 slots, 44 refused each
		// window, 2,668 429s for 1,280 items, and an item failed after its 429s in a row. Now a refused
		// probe waits 0 to 2^n - 1 windows (n refusals, at most 5), one that found half a window shortens
		// that: 1,138 429s, no item lost. Far from 5% still: the probes that do go still meet each other.
		const { result } = await runScenario(1893);
		expect(scenarioOf(1893)).toMatchObject({ kind: 'exact', limit: 20, windowMs: 5_000 });
		expect(result).toMatchObject({ lost: 0, duplicated: 0 });
		expect(result.rateLimitedAll).toBeLessThan(result.items);
	});

	it('a process whose probes others crowd out window after window keeps its last item (seed 998: 64 processes on 20 per 5 s and a foreign client)', async () => {
		// Until 2026-11-27 a 429 to such a probe counted as the key refusing: process 37's last item, its
		// probe refused 7 times in a row while the 63 others spent the windows, failed with "rate limit
		// reached". The key moved all along (through the others), so the item now waits its turn.
		const { result } = await runScenario(998);
		expect(scenarioOf(998)).toMatchObject({ kind: 'foreign', limit: 20, windowMs: 5_000 });
		expect(result.processes).toBe(64);
		expect(result).toMatchObject({ lost: 0, duplicated: 0 });
	});

	it.each([596, 1280])(
		'processes that join a window another is spending send their few items in its room, not spread to its end: seed %i (100 a minute)',
		async (seed) => {
			// Until 2026-11-28 a process that came after another had spent part of the window spread its
			// items over the rest of it as if every request spent before it came were someone's pace still:
			// 54 and 63 items ended 42 s after the last process started, in the first minute's room.
			const { result } = await runScenario(seed);
			const scenario = scenarioOf(seed);
			expect(scenario).toMatchObject({ limit: 100, windowMs: 60_000 });
			expect(result.items).toBeLessThanOrEqual(scenario.limit);
			const lastStart = Math.max(...scenario.processes.map((p) => p.startMs));
			expect(result.violations).toEqual([]);
			expect(result.wallMs - lastStart).toBeLessThan(5_000);
		},
	);

	it.each([1720, 1460])(
		'a process that joins a window others spent does not take their past for many sharers: seed %i (2 processes, 100 a minute) ends in the windows it needs',
		async (seed) => {
			// Until 2026-11-27 the fall a process found on joining (its first window, or a window it took
			// for a new one when its reset was named too early) counted as others sharing the next: it
			// kept 1/41 of a window, and these runs took 1.77x and 2.00x the floor (65% and 73% used).
			const { result } = await runScenario(seed);
			expect(scenarioOf(seed)).toMatchObject({ limit: 100, windowMs: 60_000 });
			expect(result.violations).toEqual([]);
			expect(result.wallMs).toBeLessThanOrEqual(1.05 * result.floorMs);
		},
	);

	it.each([865, 1013])(
		'processes that finished since the last window do not hold the others to their share: seed %i uses the limit',
		async (seed) => {
			// Until 2026-11-27 a window was paced by the last window's sharers for all of its length, or more:
			// two processes left of four spread their work over a minute as if four were still sending (seed
			// 865: 65% of the limit used, twice the floor; seed 1013, 8 processes on 100 per 10 s: 74%).
			const { result } = await runScenario(seed);
			expect(result.violations).toEqual([]);
		},
	);

	it('two processes that split a window 97 to 3 do not keep that split: seed 1618 (2 processes on exact resets, 100 a minute) starves neither', async () => {
		// Until 2026-11-27 each measured its part of the window's fall as (all / own): the first process
		// 1.03, the second 33, and each kept its part: 18 requests in ten windows for the second. Now
		// a process that saw anyone else counts at least two: from window 7 they split 50 to 50 (before
		// that, the 1-3 requests of the second still hide in the first's count).
		const { result } = await runScenario(1618);
		expect(scenarioOf(1618)).toMatchObject({ kind: 'exact', limit: 100, windowMs: 60_000 });
		expect(result.violations).toEqual([]);
		expect(result).toMatchObject({ lost: 0, duplicated: 0 });
	});

	it('queue mode: two workers of three executions each, stalled while their executions start, do not both take the next window for their own', async () => {
		// The queue-mode test's shape (100 per 2 s, resets in whole seconds rounded up, 600 creates). Worker
		// 0 spent 97 of the first window alone, then stalled; worker 1 joined for the last 3, and the 429s
		// went to worker 0's requests held up by its stall. Until 2026-11-27 each took that window for one it
		// had alone (worker 1 counted from its first answer; worker 0 ignored 429s its own count had room
		// for), and both spent the second at once: 99 429s there, 103 of 703 requests (14.7%). Now 5 of
		// 605. The stalls, starts and latency are one draw of many tried (docs/rate-limits.md).
		const scenario = queueShape(
			9_052,
			[8, 107, 296, 721, 462, 230],
			[
				{ host: 0, at: 107, ms: 760 },
				{ host: 0, at: 296, ms: 779 },
				{ host: 1, at: 462, ms: 277 },
				{ host: 1, at: 230, ms: 388 },
			],
			437,
		);
		const { result } = await runScenario(scenario.seed, { scenario });
		expect(result).toMatchObject({ requests: expect.any(Number), lost: 0, duplicated: 0 });
		expect(result.rateLimitedAll / result.requests).toBeLessThanOrEqual(0.05);
	});

	it('queue mode: a worker stalled for over a second does not spend the window on figures it read late', async () => {
		// Worker 0 stalls 1.1 s while its executions start, with the answers to its first requests unread;
		// worker 1 takes the window meanwhile. Until 2026-11-27 worker 0 then granted on those old figures
		// what worker 1 had taken: 44 of 644 requests answered 429 (6.8%). Now an answer that took over four
		// times the usual answer time (and 250 ms) lets one request go, and more only after its answer: 26
		// of 626 (4.2%).
		const scenario = queueShape(
			9_036,
			[4, 89, 269, 752, 494, 255],
			[
				{ host: 0, at: 89, ms: 1130 },
				{ host: 0, at: 269, ms: 1169 },
				{ host: 1, at: 494, ms: 398 },
				{ host: 1, at: 255, ms: 560 },
			],
			749,
		);
		const { result } = await runScenario(scenario.seed, { scenario });
		expect(result).toMatchObject({ lost: 0, duplicated: 0 });
		expect(result.rateLimitedAll / result.requests).toBeLessThanOrEqual(0.05);
	});

	it('sees what it is meant to see: a service that lowers its limit costs 429s, excused in the window of the change', async () => {
		const { result, service } = await runScenario(84);
		expect(service.windows.some((w) => w.changed)).toBe(true);
		expect(result.rateLimitedAll).toBeGreaterThanOrEqual(result.rateLimited);
	});
});
