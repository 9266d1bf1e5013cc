/**
 * Fault injection: targeted one-shot faults queued by tests, and random faults at configured rates drawn from a
 * seeded PRNG, so a failing run repeats with the same --fault-seed.
 */
import { failure, type Reply } from './http';
import { Random } from './random';
import { rateLimitHeaders, retryAfterHeader } from './rate-limit';
import type { FAULT_KINDS, FaultRule, SandboxConfig } from './schemas';
import type { QueuedFault } from './types';

export type FaultKind = (typeof FAULT_KINDS)[number];
/** Kinds that re-shape the operation's own answer, so the operation always runs. */
export const RESHAPING_KINDS: readonly FaultKind[] = ['no-data', 'no-success', 'no-id'];
export type FaultAction =
	| { status: number; retryAfter: number }
	| { kind: FaultKind; delayMs?: number };

export interface FaultDecision {
	action: FaultAction;
	/** Run the real operation first, then replace its response. */
	after: boolean;
	/** For the request log: 'status:503', 'drop', 'random:malformed'... */
	label: string;
}

export interface FaultTarget {
	method: string;
	path: string;
	query: Record<string, string | string[]>;
}

const MALFORMED_BODY = '{"success":true,"data":[{"id":"ld_';
const STATUS_MESSAGES: Record<number, string> = {
	500: 'Internal server error',
	502: 'Bad gateway',
	503: 'Service temporarily unavailable',
	504: 'Gateway timeout',
};

const actionLabel = (action: FaultAction) =>
	'status' in action ? `status:${action.status}` : action.kind;

function matches(fault: QueuedFault, target: FaultTarget): boolean {
	if (fault.method && fault.method !== target.method) return false;
	if (fault.path) {
		const hit = fault.path.endsWith('*')
			? target.path.startsWith(fault.path.slice(0, -1))
			: target.path === fault.path;
		if (!hit) return false;
	}
	return Object.entries(fault.query ?? {}).every(([key, value]) => target.query[key] === value);
}

export class Faults {
	private queue: QueuedFault[] = [];
	private nextId = 1;
	private rng: Random;

	constructor(seed: number) {
		this.rng = new Random(seed);
	}

	reseed(seed: number): void {
		this.rng = new Random(seed);
	}

	add(rule: FaultRule): QueuedFault {
		const { times, ...rest } = rule;
		const fault: QueuedFault = { id: this.nextId++, ...rest, remaining: times };
		this.queue.push(fault);
		return { ...fault };
	}

	list(): QueuedFault[] {
		return this.queue.map((f) => ({ ...f }));
	}

	clear(): void {
		this.queue = [];
	}

	/** Targeted faults first, oldest first; otherwise one PRNG draw decides among the random rates. */
	pick(target: FaultTarget, config: SandboxConfig): FaultDecision | undefined {
		const fault = this.queue.find((f) => matches(f, target));
		if (fault && fault.skip > 0) {
			fault.skip--;
			return this.random(config);
		}
		if (fault) {
			if (--fault.remaining === 0) this.queue.splice(this.queue.indexOf(fault), 1);
			const action: FaultAction =
				fault.status !== undefined
					? { status: fault.status, retryAfter: fault.retryAfter }
					: { kind: fault.kind as FaultKind, delayMs: fault.delayMs };
			const after = fault.after || ('kind' in action && RESHAPING_KINDS.includes(action.kind));
			return { action, after, label: actionLabel(action) };
		}
		return this.random(config);
	}

	private random(config: SandboxConfig): FaultDecision | undefined {
		const roll = this.rng.next();
		// New rates go last: a seed then gives the same faults as before wherever the new rates are 0.
		const rates: [number, FaultKind | 'error' | 'after-429'][] = [
			[config.errorRate, 'error'],
			[config.burst429Rate, '429-no-headers'],
			[config.dropRate, 'drop'],
			[config.malformedRate, 'malformed'],
			[config.falseSuccessRate, 'false-success'],
			[config.after429Rate, 'after-429'],
		];
		let edge = 0;
		for (const [rate, kind] of rates) {
			if (roll < edge + rate) {
				if (kind === 'after-429') {
					// The operation ran; its answer is a 429 as if the limit had been hit (a gateway counting late).
					return {
						action: { status: 429, retryAfter: 1 },
						after: true,
						label: 'random:after:status:429',
					};
				}
				// The same draw picks which 5xx, so one request costs exactly one draw.
				const status = [500, 502, 503][Math.min(2, Math.floor(((roll - edge) / rate) * 3))];
				const action: FaultAction = kind === 'error' ? { status, retryAfter: 1 } : { kind };
				return { action, after: false, label: `random:${actionLabel(action)}` };
			}
			edge += rate;
		}
		return undefined;
	}
}

/**
 * The response a fault sends. `limitHeaders` are the request's real rate-limit headers: kept on injected
 * errors (the service answered), absent on a 429 burst (a proxy answered) and on a dropped connection.
 * `real` is the operation's own answer, for the kinds that re-shape it.
 */
export function faultReply(
	action: FaultAction,
	limitHeaders: Record<string, string>,
	config: SandboxConfig,
	now: number,
	real?: Reply,
): Reply {
	if ('status' in action) {
		if (action.status !== 429) {
			const message = STATUS_MESSAGES[action.status] ?? `Injected error ${action.status}`;
			return failure(action.status, message, undefined, limitHeaders);
		}
		// A 429 that tells the truth about when to come back, like a real limit hit.
		const resetAt = now + action.retryAfter * 1000;
		const headers = {
			...rateLimitHeaders({ limit: config.rateLimit, remaining: 0, resetAt }, now, config),
			...retryAfterHeader(resetAt, now, config),
		};
		return failure(429, `Rate limit exceeded, retry in ${action.retryAfter} s`, undefined, headers);
	}
	switch (action.kind) {
		case 'drop':
			return { status: 0, body: null };
		case 'malformed':
			return { status: 200, body: null, raw: MALFORMED_BODY, headers: limitHeaders };
		case 'false-success':
			return {
				...failure(500, 'The operation could not be completed', undefined, limitHeaders),
				status: 200,
			};
		case '429-no-headers':
			return failure(429, 'Too many requests');
		case 'slow':
			// Handled by the server before the operation runs (it waits, then answers as usual).
			return real ?? { status: 200, body: { success: true, data: null } };
		case 'no-data':
		case 'no-success':
		case 'no-id': {
			const answer = real ?? { status: 200, body: { success: true, data: null } };
			// Only a successful answer is re-shaped; an error stays what it was.
			if (
				answer.error ||
				answer.status >= 400 ||
				typeof answer.body !== 'object' ||
				answer.body === null
			)
				return answer;
			const { success, data, ...rest } = answer.body as Record<string, unknown>;
			const body =
				action.kind === 'no-data'
					? { success, ...rest }
					: action.kind === 'no-id'
						? { success, data: withoutId(data), ...rest }
						: { data, ...rest };
			return { ...answer, body, headers: { ...limitHeaders, ...answer.headers } };
		}
	}
}

/** An answer's data without its `id`, as a service that answers an update with the changed fields only. */
function withoutId(data: unknown): unknown {
	if (typeof data !== 'object' || data === null || Array.isArray(data)) return data;
	const { id: _id, ...rest } = data as Record<string, unknown>;
	return rest;
}
