/**
 * What a scenario measures and reports: the figures of each run, the scenario's result and its targets, and
 * `Scenario`, the entry every scenario file registers in scenarios.ts.
 */
import { median, rateLimitFloor, type Floor, type Machine } from './measure';
import type { Sizes, World } from './world';

/** A scenario's name on the command line (`--only`). */
export type ScenarioKey = string;

/** One entry of the bench, registered in scenarios.ts (run in that order). */
export interface Scenario {
	key: ScenarioKey;
	/** Runs it in the world; its results in report order. */
	run(world: World): Promise<ScenarioResult[]>;
	/** Its own targets instead of the usual ones (`evaluate`). */
	targets?: (results: ScenarioResult[]) => Target[];
}

export interface RunFigures {
	run: number;
	/** /api/v1 requests the sandbox received, 429s included. */
	requests: number;
	rateLimited: number;
	/**
	 * Most requests in flight at the sandbox at once. Usually 1 even for 500 concurrent items: the sandbox
	 * answers each request before n8n's single thread gets the next one onto the wire.
	 */
	maxConcurrent: number;
	failedExecution: boolean;
	failedItems: number;
	/** Items the workflow returned (error items excluded). */
	returned: number;
	/** Distinct ids among them. */
	distinct: number;
	expected: number;
	/** Every expected item exactly once (and, for creates, exactly one lead per input item in the service). */
	complete: boolean;
	/** Creates only: leads created more than once for the same input item. */
	duplicatesCreated?: number;
	/** Execution wall time in ms (null: no execution, e.g. an idle poll). */
	wallMs: number | null;
	/** First to last request arrival at the sandbox, ms. */
	spanMs: number;
	/** From the webhook call to the first request's arrival: n8n's work before the node sends anything. */
	firstRequestMs?: number;
	/** From the first request the sandbox received to the complete answer (the strict floor's measure). */
	afterFirstMs?: number;
	startRssKb?: number;
	peakRssKb?: number;
	/**
	 * A server without rate-limit headers: the requests sent once the window of the first 429 was over
	 * (what the node had learnt from it by then), and how many of them met a 429.
	 */
	afterFirstWindow?: { requests: number; rateLimited: number };
	error?: string;
}

export interface ScenarioResult {
	id: string;
	key: ScenarioKey;
	title: string;
	/** Who does the work: this package or n8n's HTTP Request node. */
	subject: 'package' | 'http-request';
	/** How it was run. */
	how: string;
	requestsMin: number;
	floor: Floor;
	runs: RunFigures[];
	notes: string[];
	/** The volume scenario's own figures: the heap kept, and its wall-time bound (floor and n8n's own). */
	volume?: { heapGrowth: number; boundMs: number };
	/** Targets that differ from the usual ones (server variants; the strict floor of scenario 2). */
	goals?: {
		/** Requests allowed at most (default: the minimum). */
		requestsMax?: number;
		/** No 429 at all (default: at most 1% of the requests). */
		no429?: boolean;
		/** Only "0 failures, every item once" is a target (the rest is reported). */
		failuresOnly?: boolean;
		/** Wall time from the first request within 1.1x the strict floor. */
		strict?: boolean;
		/** At most this share of 429s among the requests after the first 429's window (headerless). */
		learnt429?: number;
	};
}

export interface Target {
	scenario: string;
	target: string;
	met: boolean;
	detail: string;
}

export interface BenchReport {
	tool: 'n8n-nodes-outreach-automation bench';
	startedAt: string;
	durationMs: number;
	mode: Sizes['mode'];
	sizes: Sizes;
	machine: Machine;
	n8n: {
		version: string;
		node: string;
		pid?: number;
		startupMs: number;
		peakResetSupported: boolean;
		/** Settings given through BENCH_N8N_ENV (none in a normal run). */
		extraEnv: Record<string, string>;
	};
	floorExplanation: string;
	scenarios: ScenarioResult[];
	targets: Target[];
}

export function scenario(
	world: World,
	id: string,
	key: ScenarioKey,
	title: string,
	subject: ScenarioResult['subject'],
	how: string,
	requestsMin: number,
	/** Requests the floor is computed for: more than requestsMin when part of the window is spent by others. */
	floorRequests = requestsMin,
): ScenarioResult {
	return {
		id,
		key,
		title,
		subject,
		how,
		requestsMin,
		floor: rateLimitFloor(floorRequests, world.sizes.rateLimit, world.sizes.windowMs),
		runs: [],
		notes: [],
	};
}

export const fmt = (n: number) => n.toLocaleString('en-US');
export const round2 = (n: number) => Math.round(n * 100) / 100;

export function evaluate(scenarios: ScenarioResult[]): Target[] {
	const targets: Target[] = [];
	for (const s of scenarios.filter((x) => x.subject === 'package')) {
		const goals = s.goals ?? {};
		const requests = s.runs.map((r) => r.requests);
		const maxRequests = Math.max(...requests);
		if (!goals.failuresOnly) {
			const allowed = goals.requestsMax ?? s.requestsMin;
			targets.push({
				scenario: s.id,
				target:
					s.key === 'trigger' && s.id.startsWith('4a')
						? 'one request per idle poll'
						: allowed === s.requestsMin
							? 'requests = minimum'
							: `requests <= minimum + ${allowed - s.requestsMin}`,
				met: maxRequests <= allowed,
				detail: `${maxRequests} sent at most, minimum ${s.requestsMin}`,
			});
		}
		const failures = s.runs.filter(
			(r) => r.failedExecution || r.failedItems > 0 || !r.complete,
		).length;
		targets.push({
			scenario: s.id,
			target: '0 failures, every item exactly once',
			met: failures === 0,
			detail: failures
				? `${failures} of ${s.runs.length} runs failed or were incomplete`
				: `${s.runs.length} runs complete`,
		});
		const learnt = goals.learnt429;
		if (learnt !== undefined) {
			const shares = s.runs.map((r) =>
				r.afterFirstWindow?.requests
					? r.afterFirstWindow.rateLimited / r.afterFirstWindow.requests
					: 0,
			);
			targets.push({
				scenario: s.id,
				target: `<= ${learnt * 100}% of requests answered 429 after the first window`,
				met: Math.max(...shares) <= learnt,
				detail: s.runs
					.map(
						(r, i) =>
							`run ${r.run}: ${r.afterFirstWindow?.rateLimited ?? 0} of ${r.afterFirstWindow?.requests ?? 0} (${(shares[i] * 100).toFixed(1)}%)`,
					)
					.join(', '),
			});
		}
		if (goals.failuresOnly) continue;
		const worst429 = Math.max(...s.runs.map((r) => (r.requests ? r.rateLimited / r.requests : 0)));
		const most429 = Math.max(...s.runs.map((r) => r.rateLimited));
		targets.push(
			goals.no429
				? {
						scenario: s.id,
						target: '0 requests answered 429',
						met: most429 === 0,
						detail: `${most429} in the worst run`,
					}
				: {
						scenario: s.id,
						target: '<= 1% of requests answered 429',
						met: worst429 <= 0.01,
						detail: `${(worst429 * 100).toFixed(2)}% in the worst run`,
					},
		);
		const walls = s.runs.map((r) => r.wallMs).filter((w): w is number => w !== null);
		if (walls.length) {
			const worst = Math.max(...walls) / s.floor.floorMs;
			targets.push({
				scenario: s.id,
				target: s.floor.slackPerWindowMs
					? `wall time <= 1.1x the floor (+${s.floor.slackPerWindowMs / 1000} s per window)`
					: 'wall time <= 1.1x the floor',
				met: worst <= 1.1,
				detail: `${worst.toFixed(2)}x in the worst run (median ${(median(walls) / s.floor.floorMs).toFixed(2)}x)`,
			});
		}
		const after = s.runs.map((r) => r.afterFirstMs).filter((w): w is number => w !== undefined);
		if (goals.strict && after.length && s.floor.strictMs > 0) {
			const worst = Math.max(...after) / s.floor.strictMs;
			targets.push({
				scenario: s.id,
				target: 'wall from the first request <= 1.1x the strict floor',
				met: worst <= 1.1,
				detail: `${worst.toFixed(2)}x in the worst run (median ${(median(after) / s.floor.strictMs).toFixed(2)}x of ${s.floor.strictMs / 1000} s)`,
			});
		}
	}
	return targets;
}
