/**
 * Runs one scenario: its processes, each with its own pacing state, against the simulated service on
 * the virtual clock, and checks the invariants of issue #38 on what happened (see docs/rate-limits.md,
 * "The simulator").
 */
import { useClock } from '../../nodes/OutreachAutomation/transport/clock';
import { resetRateLimitState } from '../../nodes/OutreachAutomation/transport/pacing';
import { VirtualClock } from './clock';
import { itemName, startProcess, type ProcessResult } from './process';
import { floorMs, scenarioOf, type Scenario } from './scenario';
import { Service, type TimelineEntry } from './service';

export interface ScenarioResult {
	seed: number;
	kind: string;
	processes: number;
	items: number;
	requests: number;
	rateLimited: number;
	rateLimitedAll: number;
	/** Of `rateLimitedAll`: 429s to requests sent before their process had any answer (not excused). */
	rateLimitedBeforeAnswer: number;
	wallMs: number;
	floorMs: number;
	lost: number;
	duplicated: number;
	/** The limit per window at the start, and the window's length. */
	limit: number;
	windowMs: number;
	/** Processes whose first request was refused (excused: a crowd that starts together cannot know). */
	firstRequestRefused: number;
	/** A lone process's first round trip (null with several). */
	firstAnswerMs: number | null;
	/** The share of the limit used from the window after every process's first answer (see usedShare);
	 * null where not judged. */
	used: number | null;
	ok: boolean;
	violations: string[];
}

/** Measures beside the result, for the summary table (not in the JSON). */
export interface Measures {
	avoidableShare: number;
	wallRatio: number;
	/** Share of the limit used while processes had work (several processes), else undefined. */
	used?: number;
	/** Most policy looks per request of one process. */
	looksPerRequest: number;
	events: number;
}

/** Not one item waits this long: a run still going then has stalled. */
const MAX_VIRTUAL_MS = 48 * 3600_000;
/** The checks' bounds, as issue #59 restates them (docs/rate-limits.md, "The simulator"). */
const MAX_AVOIDABLE_429_SHARE = 0.05;
/** Where the processes are more than half the limit per window (fewer than two requests each). */
const MAX_AVOIDABLE_429_SHARE_CROWDED = 0.1;
/** Alone on exact resets: of the floor plus the first round trip. */
const MAX_WALL_RATIO_ALONE = 1.05;
/** Alone on the other kinds with headers or none, with this many windows of work or more: of the floor. */
const MAX_WALL_RATIO_ALONE_COARSE = 1.1;
const MIN_WINDOWS_ALONE_COARSE = 10;
const ALONE_COARSE_KINDS = new Set([
	'whole-second-up',
	'whole-second-down',
	'http-date',
	'delta-s',
	'foreign',
	'headerless',
]);
const MIN_USED_SHARED = 0.85;
const MIN_USED_CROWD = 0.75;
const MIN_USED_HEADERLESS = 0.7;
/** Several processes whose items fit in one window end within the floor, the last start and this. */
export const SHORT_RUN_SLACK_MS = 10_000;
const STARVATION_WINDOWS = 10;
const MIN_SHARE_OF_EQUAL = 1 / 3;
const MAX_LOOKS_PER_REQUEST = 4;

const COARSE = new Set(['whole-second-up', 'whole-second-down', 'http-date', 'delta-s']);

export async function runScenario(
	seed: number,
	options: { timeline?: boolean; scenario?: Scenario } = {},
): Promise<{
	result: ScenarioResult;
	measures: Measures;
	timeline?: TimelineEntry[];
	service: Service;
}> {
	const scenario = options.scenario ?? scenarioOf(seed);
	const clock = new VirtualClock(scenario.startAt, seed);
	resetRateLimitState();
	useClock(clock);
	const service = new Service(clock, scenario, options.timeline === true);
	let results: ProcessResult[] = [];
	try {
		results = scenario.processes.map((plan, i) => startProcess(i, plan, clock, service));
		const done = () => results.every((r) => r.endedAt !== undefined);
		await clock.run(scenario.startAt + MAX_VIRTUAL_MS, done);
		service.finished = true;
	} finally {
		resetRateLimitState();
		useClock();
	}
	const { result, measures } = check(scenario, service, results, clock);
	measures.events = clock.fired;
	return { result, measures, timeline: service.timeline, service };
}

function check(
	scenario: Scenario,
	service: Service,
	results: ProcessResult[],
	clock: VirtualClock,
): { result: ScenarioResult; measures: Measures } {
	const violations: string[] = [];
	const n = scenario.processes.length;
	const items = scenario.processes.reduce((sum, p) => sum + p.items, 0);

	// Nothing lost, nothing sent twice.
	let lost = 0;
	let duplicated = 0;
	const failures = new Map<string, number>();
	results.forEach((r, p) => {
		if (r.crashed) violations.push(`process ${p} failed: ${r.crashed}`);
		r.outcomes.forEach((outcome, i) => {
			const name = itemName(p, i);
			const runs = service.executions.get(name) ?? 0;
			const excess = runs - 1 - (service.lostAnswers.get(name) ?? 0);
			if (excess > 0) duplicated += excess;
			if (outcome === undefined) lost++;
			else if (outcome.ok && runs === 0) lost++;
			else if (!outcome.ok && !service.faulted.has(name)) {
				lost++;
				const reason = (outcome.message ?? '').slice(0, 60);
				failures.set(reason, (failures.get(reason) ?? 0) + 1);
			}
		});
	});
	if (lost) {
		const reasons = [...failures].map(([m, c]) => `${c}x "${m}"`).join(', ');
		violations.push(`lost ${lost} items${reasons ? `: ${reasons}` : ' (never ended)'}`);
	}
	if (duplicated) violations.push(`${duplicated} carried out twice`);

	// Avoidable 429s: each process's first request refused, a limit changed under it, one learning 429
	// per process on whole-second resets are excused; not judged without rate-limit headers.
	const requests = service.requests.reduce((a, b) => a + b, 0);
	const rateLimitedAll = service.limited.reduce((a, b) => a + b, 0);
	const firstRequestRefused = service.firstRefused.size;
	let excused = service.excusedByChange + firstRequestRefused;
	if (COARSE.has(scenario.kind)) excused += service.limited.filter((c) => c > 0).length;
	const rateLimited = Math.max(0, rateLimitedAll - excused);
	const avoidableShare = requests ? rateLimited / requests : 0;
	const free = scenario.limit - (scenario.foreign?.perWindow ?? 0);
	const maxShare = n <= free / 2 ? MAX_AVOIDABLE_429_SHARE : MAX_AVOIDABLE_429_SHARE_CROWDED;
	if (scenario.reset !== 'none' && avoidableShare > maxShare)
		violations.push(`avoidable 429s ${(100 * avoidableShare).toFixed(1)}% of ${requests}`);

	// Wall against the floor.
	const ended = Math.max(...results.map((r) => r.endedAt ?? clock.now()));
	const wallMs = ended - scenario.startAt;
	const floor = floorMs(scenario);
	const wallRatio = wallMs / floor;
	const host0 = scenario.processes[0]?.host ?? 0;
	const firstAnswerMs =
		n === 1 && service.firstAnswer.has(host0)
			? service.firstAnswer.get(host0)! - service.firstSent.get(host0)!
			: null;
	if (scenario.kind === 'exact' && n === 1) {
		const bound = MAX_WALL_RATIO_ALONE * (floor + (firstAnswerMs ?? 0));
		if (wallMs > bound)
			violations.push(
				`wall ${wallRatio.toFixed(2)}x the floor, alone on exact resets (over 1.05 x (floor + first answer))`,
			);
	}
	const windowsOfWork = Math.ceil(items / Math.max(1, free));
	if (
		n === 1 &&
		ALONE_COARSE_KINDS.has(scenario.kind) &&
		windowsOfWork >= MIN_WINDOWS_ALONE_COARSE &&
		wallRatio > MAX_WALL_RATIO_ALONE_COARSE
	)
		violations.push(`wall ${wallRatio.toFixed(2)}x the floor, alone on ${scenario.kind}`);
	// Several processes whose items fit in one window (hung or slow answers take that long themselves).
	const lastStart = Math.max(...scenario.processes.map((p) => p.startMs));
	if (
		n > 1 &&
		items <= free &&
		scenario.kind !== 'hung' &&
		scenario.kind !== 'slow' &&
		wallMs - floor - lastStart > SHORT_RUN_SLACK_MS
	)
		violations.push(
			`wall ${((wallMs - floor - lastStart) / 1000).toFixed(1)} s over the floor plus the last start, items for one window`,
		);

	const measures: Measures = { avoidableShare, wallRatio, looksPerRequest: 0, events: 0 };
	let used: number | null = null;
	if (n > 1) {
		used = usedShare(scenario, service) ?? null;
		measures.used = used ?? undefined;
		const least =
			scenario.reset === 'none' ? MIN_USED_HEADERLESS : n >= 32 ? MIN_USED_CROWD : MIN_USED_SHARED;
		if (used !== null && used < least)
			violations.push(`${(100 * used).toFixed(0)}% of the limit used by ${n} processes`);
		const starved = starvation(scenario, service, results);
		if (starved) violations.push(starved);
	}

	// Executions of one process (`host`) share its key: its looks are theirs together.
	const hosts = new Map<number, { looks: number; sent: number }>();
	results.forEach((r, p) => {
		const host = scenario.processes[p].host ?? p;
		const seen = hosts.get(host) ?? { looks: 0, sent: 0 };
		hosts.set(host, {
			looks: Math.max(seen.looks, r.looks),
			sent: seen.sent + service.requests[p],
		});
	});
	hosts.forEach(({ looks, sent }, p) => {
		if (!sent) return;
		measures.looksPerRequest = Math.max(measures.looksPerRequest, looks / sent);
		if (looks > MAX_LOOKS_PER_REQUEST * sent + MAX_LOOKS_PER_REQUEST)
			violations.push(`process ${p}: ${looks} looks of the policy for ${sent} requests`);
	});

	const result: ScenarioResult = {
		seed: scenario.seed,
		kind: scenario.kind,
		processes: n,
		items,
		requests,
		rateLimited,
		rateLimitedAll,
		rateLimitedBeforeAnswer: service.limitedBeforeAnswer,
		wallMs: Math.round(wallMs),
		floorMs: Math.round(floor),
		lost,
		duplicated,
		limit: scenario.limit,
		windowMs: scenario.windowMs,
		firstRequestRefused,
		firstAnswerMs: firstAnswerMs === null ? null : Math.round(firstAnswerMs),
		used: used === null ? null : Math.round(1000 * used) / 1000,
		ok: violations.length === 0,
		violations,
	};
	return { result, measures };
}

/** Whether `host` (undefined: any) stalled between `from` and `to` (epoch ms). */
function stalled(scenario: Scenario, host: number | undefined, from: number, to: number): boolean {
	return (scenario.stalls ?? []).some(
		(stall) =>
			(host === undefined || stall.host === host) &&
			scenario.startAt + stall.at < to &&
			scenario.startAt + stall.at + stall.ms > from,
	);
}

/**
 * The share of the limit used, over the windows that began after every process's first answer (with
 * answers slower than the window, after the first answer at all) and before the last (the run's end),
 * a gap between windows counting as unused time. Undefined under two such windows.
 */
function usedShare(scenario: Scenario, service: Service): number | undefined {
	const windows = service.windows;
	let lastOurs = -1;
	windows.forEach((w, i) => {
		if (w.accepted.some((c) => c > 0) || w.limited > 0) lastOurs = i;
	});
	const answers = [...service.firstAnswer.values()];
	if (!answers.length) return undefined;
	const from = scenario.kind === 'slow' ? Math.min(...answers) : Math.max(...answers);
	const first = windows.findIndex((w) => w.start >= from);
	if (first < 0 || lastOurs - first < 2) return undefined;
	let used = 0;
	let capacity = 0;
	for (let i = first; i < lastOurs; i++) {
		const w = windows[i];
		// A stalled process cannot use its share: such a window says nothing of the pacing.
		if (stalled(scenario, undefined, w.start, windows[i + 1].start)) continue;
		used += w.foreign + w.accepted.reduce((a, b) => a + b, 0);
		capacity += (w.limit * (windows[i + 1].start - w.start)) / scenario.windowMs;
	}
	return capacity ? used / capacity : undefined;
}

/**
 * Over any ten windows during which a process had work all along, it got at least a third of an equal
 * share of what the limit left the processes that had work then. Returns the first starvation found.
 */
function starvation(
	scenario: Scenario,
	service: Service,
	results: ProcessResult[],
): string | undefined {
	const windows = service.windows;
	const w = scenario.windowMs;
	for (let i = 0; i + STARVATION_WINDOWS <= windows.length; i++) {
		const from = windows[i].start;
		const to = windows[i + STARVATION_WINDOWS - 1].start + w;
		const started = (p: number) => scenario.startAt + scenario.processes[p].startMs;
		const active = results
			.map((r, p) => ({ p, r }))
			.filter(({ p, r }) => started(p) < to && (r.endedAt ?? Infinity) > from);
		if (active.length < 2) continue;
		let free = 0;
		for (let k = i; k < i + STARVATION_WINDOWS; k++) free += windows[k].limit - windows[k].foreign;
		const fair = (free / active.length) * MIN_SHARE_OF_EQUAL;
		for (const { p, r } of active) {
			if (started(p) > from || (r.endedAt ?? Infinity) < to) continue;
			if (stalled(scenario, scenario.processes[p].host ?? p, from, to)) continue;
			let got = 0;
			for (let k = i; k < i + STARVATION_WINDOWS; k++) got += windows[k].accepted[p];
			if (got < fair)
				return `process ${p} starved: ${got} requests in windows ${i + 1}-${i + STARVATION_WINDOWS} (a third of an equal share: ${fair.toFixed(1)})`;
		}
	}
	return undefined;
}
