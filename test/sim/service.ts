/**
 * The simulated service: one API key's fixed-window rate limit as real servers implement it, on the
 * virtual clock. It counts each request when it arrives (latency with jitter: requests sent together
 * arrive, and are counted, in another order), answers with the rate-limit headers of its kind, and
 * records everything the checks need: each window's requests, each item's executions, each 429.
 */
import type { IN8nHttpFullResponse, IHttpRequestOptions } from 'n8n-workflow';

import { Random } from '../sandbox/random';
import type { VirtualClock } from './clock';
import type { Scenario } from './scenario';

export interface WindowRecord {
	start: number;
	limit: number;
	/** Requests counted in it and allowed: ours per process, and the foreign client's. */
	accepted: number[];
	foreign: number;
	/** Answered 429: ours. */
	limited: number;
	/** Whether the limit changed while it was open (its 429s are excused). */
	changed: boolean;
}

export interface TimelineEntry {
	t: number;
	process: number;
	item: string;
	event: string;
}

/** What the simulated HTTP helper hands the node: an answer, or a failure without one. */
export type Outcome =
	| { answer: IN8nHttpFullResponse }
	| { error: Error & { code?: string } }
	| { hung: true };

const ENVELOPE_429 = {
	success: false,
	error: { code: 'rate_limited', message: 'Rate limit exceeded' },
};

export class Service {
	readonly windows: WindowRecord[] = [];
	private current: WindowRecord | undefined;
	private count = 0;
	private limit: number;
	/** Executions per item, and answers lost after one (a hung request, a reset connection). */
	readonly executions = new Map<string, number>();
	readonly lostAnswers = new Map<string, number>();
	/** Items that met an injected fault (a 5xx, a reset connection, a hung request). */
	readonly faulted = new Set<string>();
	/** Per process: requests received, 429s answered. */
	readonly requests: number[];
	readonly limited: number[];
	/** 429s answered in a window whose limit changed while it was open. */
	excusedByChange = 0;
	/**
	 * 429s to requests sent before their process (its host) had any answer: no pacing could have known
	 * of the others then. Reported beside the goal, not excused by it.
	 */
	limitedBeforeAnswer = 0;
	/** Per host: when its first answer (any, a timeout included) came, and when its first request left. */
	readonly firstAnswer = new Map<number, number>();
	readonly firstSent = new Map<number, number>();
	/** Processes whose first request to reach the limiter was refused (a crowd starting together). */
	readonly firstRefused = new Set<number>();
	private readonly arrived = new Set<number>();
	/** Requests sent so far (see Scenario.firstAnswerMs). */
	private sent = 0;
	readonly timeline: TimelineEntry[] | undefined;
	private readonly rng: Random;

	constructor(
		private readonly clock: VirtualClock,
		private readonly scenario: Scenario,
		record: boolean,
	) {
		this.limit = scenario.limit;
		this.requests = new Array<number>(scenario.processes.length).fill(0);
		this.limited = new Array<number>(scenario.processes.length).fill(0);
		this.rng = new Random(scenario.seed * 7919 + 17);
		this.timeline = record ? [] : undefined;
		for (const change of scenario.limitChanges) {
			clock.at(change.at, () => {
				this.limit = change.limit;
				if (this.current && this.open(this.clock.now())) this.current.changed = true;
			});
		}
		if (scenario.foreign) this.startForeign(scenario.foreign.perWindow);
	}

	/** Adds to the timeline when one is kept (`event` is only made then). */
	private note(process: number, item: string, event: () => string): void {
		this.timeline?.push({ t: this.clock.now(), process, item, event: event() });
	}

	private open(now: number): boolean {
		return this.current !== undefined && now < this.current.start + this.scenario.windowMs;
	}

	/** Counts one request arriving now; returns whether it is allowed and the window it is counted in. */
	private hit(process: number): { allowed: boolean; window: WindowRecord; remaining: number } {
		const now = this.clock.now();
		const w = this.scenario.windowMs;
		if (!this.open(now)) {
			const start = this.scenario.aligned ? Math.floor(now / w) * w : now;
			this.current = {
				start,
				limit: this.limit,
				accepted: new Array<number>(this.scenario.processes.length).fill(0),
				foreign: 0,
				limited: 0,
				changed: false,
			};
			this.windows.push(this.current);
			this.count = 0;
		}
		const window = this.current!;
		this.count++;
		const allowed = this.count <= this.limit;
		if (allowed) {
			if (process < 0) window.foreign++;
			else window.accepted[process]++;
		}
		return { allowed, window, remaining: Math.max(0, this.limit - this.count) };
	}

	/** A foreign client (a script on the same key): `perWindow` requests spread evenly over each window. */
	private startForeign(perWindow: number): void {
		const every = this.scenario.windowMs / perWindow;
		const send = () => {
			if (this.finished) return;
			this.hit(-1);
			this.clock.at(this.clock.now() + every, send);
		};
		this.clock.at(this.clock.now() + this.rng.next() * every, send);
	}

	/** Set when every process is done: the foreign client stops. */
	finished = false;

	private rounded(ms: number): number {
		return this.scenario.rounding === 'up' ? Math.ceil(ms / 1000) : Math.floor(ms / 1000);
	}

	private headers(
		window: WindowRecord,
		remaining: number,
		limited: boolean,
	): Record<string, string> {
		const s = this.scenario;
		const now = this.clock.now();
		const serverNow = now + s.skewMs;
		const headers: Record<string, string> = { date: new Date(serverNow).toUTCString() };
		const resetAt = window.start + s.windowMs;
		const serverReset = resetAt + s.skewMs;
		const untilReset = Math.max(0, resetAt - now);
		if (s.reset !== 'none') {
			if (s.limitHeader) headers['x-ratelimit-limit'] = String(window.limit);
			headers['x-ratelimit-remaining'] = String(remaining);
			headers['x-ratelimit-reset'] =
				s.reset === 'epoch-ms'
					? String(serverReset)
					: s.reset === 'epoch-s'
						? String(this.rounded(serverReset))
						: s.reset === 'http-date'
							? new Date(this.rounded(serverReset) * 1000).toUTCString()
							: String(Math.max(s.rounding === 'up' ? 1 : 0, this.rounded(untilReset)));
		}
		if (limited && s.retryAfter === 'seconds')
			headers['retry-after'] = String(Math.max(1, Math.ceil(untilReset / 1000)));
		if (limited && s.retryAfter === 'http-date')
			headers['retry-after'] = new Date(Math.ceil(serverReset / 1000) * 1000).toUTCString();
		return headers;
	}

	/** The item a request is for: the lead's first name (create) or its id (get). */
	private itemOf(options: IHttpRequestOptions): string {
		const body = options.body as { first_name?: string } | undefined;
		return body?.first_name ?? String(options.url).replace(/^.*\/leads\/ld_/, '');
	}

	/**
	 * One request of `process`, sent now: resolves with what the node's HTTP helper would give it, when
	 * it would (a hung request: when its timeout ends).
	 */
	async send(process: number, options: IHttpRequestOptions): Promise<IN8nHttpFullResponse> {
		const s = this.scenario;
		const item = this.itemOf(options);
		const up = s.latency.min / 2 + this.rng.next() * s.latency.jitter;
		const down = s.latency.min / 2 + this.rng.next() * s.latency.jitter + this.slowness();
		const held = this.sent++ === 0 ? (s.firstAnswerMs ?? 0) : 0;
		const timeout = Number(options.timeout ?? 300_000);
		this.note(process, item, () => 'send');
		const host = s.processes[process].host ?? process;
		const sentAt = this.clock.now();
		if (!this.firstSent.has(host)) this.firstSent.set(host, sentAt);
		const answered = () => {
			if (!this.firstAnswer.has(host)) this.firstAnswer.set(host, this.clock.now());
		};
		return await new Promise<IN8nHttpFullResponse>((resolve, reject) => {
			this.clock.at(this.freeAt(process, this.clock.now()) + up, () => {
				const outcome = this.arrive(process, item);
				if ('answer' in outcome && outcome.answer.statusCode === 429)
					if (!((this.firstAnswer.get(host) ?? Infinity) <= sentAt)) this.limitedBeforeAnswer++;
				const deliver = () => {
					answered();
					if ('answer' in outcome) resolve(outcome.answer);
					else reject((outcome as { error: Error }).error);
				};
				if ('hung' in outcome) {
					this.clock.at(this.clock.now() - up + timeout, () => {
						answered();
						this.note(process, item, () => 'timeout');
						const error = Object.assign(new Error(`timeout of ${timeout}ms exceeded`), {
							code: 'ECONNABORTED',
						});
						reject(error);
					});
					return;
				}
				this.clock.at(this.freeAt(process, this.clock.now() + down + held), deliver);
			});
		});
	}

	/** When `process` can next run something at `t`: the end of a stall of its host, else `t`. */
	private freeAt(process: number, t: number): number {
		const host = this.scenario.processes[process].host ?? process;
		let free = t;
		// Stalls may overlap: one that ends inside another lasts until that one ends.
		for (let moved = true; moved; ) {
			moved = false;
			for (const stall of this.scenario.stalls ?? []) {
				const from = this.scenario.startAt + stall.at;
				if (stall.host === host && free >= from && free < from + stall.ms) {
					free = from + stall.ms;
					moved = true;
				}
			}
		}
		return free;
	}

	private slowness(): number {
		const slow = this.scenario.slow;
		return slow ? slow.min + this.rng.next() * (slow.max - slow.min) : 0;
	}

	private executed(item: string, answerLost: boolean): void {
		this.executions.set(item, (this.executions.get(item) ?? 0) + 1);
		if (answerLost) this.lostAnswers.set(item, (this.lostAnswers.get(item) ?? 0) + 1);
	}

	/** The request arrives: counted, perhaps refused, perhaps carried out. */
	private arrive(process: number, item: string): Outcome {
		const s = this.scenario;
		const faults = s.faults;
		// A gateway's failure: never reaches the limiter nor the API.
		if (faults && this.rng.chance(faults.gateway)) {
			this.faulted.add(item);
			this.note(process, item, () => '502 (gateway)');
			return { answer: { statusCode: 502, headers: {}, body: '<html>Bad Gateway</html>' } };
		}
		this.requests[process]++;
		const { allowed, window, remaining } = this.hit(process);
		if (!this.arrived.has(process)) {
			this.arrived.add(process);
			if (!allowed) this.firstRefused.add(process);
		}
		if (!allowed) {
			this.limited[process]++;
			window.limited++;
			if (window.changed) this.excusedByChange++;
			this.note(process, item, () => `arrives: 429 in window ${this.windows.length}`);
			return {
				answer: { statusCode: 429, headers: this.headers(window, 0, true), body: ENVELOPE_429 },
			};
		}
		const headers = this.headers(window, remaining, false);
		if (s.hung && this.rng.chance(s.hung)) {
			this.faulted.add(item);
			const ran = this.rng.chance(0.5);
			if (ran) this.executed(item, true);
			this.note(process, item, () => `hung${ran ? ' (carried out)' : ''}`);
			return { hung: true };
		}
		if (faults && this.rng.chance(faults.server)) {
			this.faulted.add(item);
			this.note(process, item, () => '503');
			return {
				answer: {
					statusCode: 503,
					headers,
					body: { success: false, error: { message: 'Service unavailable' } },
				},
			};
		}
		if (faults && this.rng.chance(faults.reset)) {
			this.faulted.add(item);
			const ran = this.rng.chance(0.5);
			if (ran) this.executed(item, true);
			this.note(process, item, () => `connection reset${ran ? ' (carried out)' : ''}`);
			return { error: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }) };
		}
		this.executed(item, false);
		this.note(
			process,
			item,
			() => `arrives: 200, ${remaining} left in window ${this.windows.length}`,
		);
		const id = `ld_${item}`;
		return {
			answer: {
				statusCode: 200,
				headers,
				body: { success: true, data: { id, first_name: item } },
			},
		};
	}
}
