/**
 * Fault injection: targeted one-shot faults queued by tests, and random faults at configured rates drawn from a
 * seeded PRNG, so a failing run repeats with the same --fault-seed.
 */
import { errorBody, type Reply } from './http';
import { Random } from './random';
import { rateLimitHeaders } from './rate-limit';
import type { FaultRule, SandboxConfig } from './schemas';
import type { QueuedFault } from './types';

export type FaultKind = 'drop' | 'malformed' | 'false-success' | '429-no-headers';
export type FaultAction = { status: number; retryAfter: number } | { kind: FaultKind };

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

const actionLabel = (action: FaultAction) => ('status' in action ? `status:${action.status}` : action.kind);

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
		if (fault) {
			if (--fault.remaining === 0) this.queue.splice(this.queue.indexOf(fault), 1);
			const action: FaultAction =
				fault.status !== undefined
					? { status: fault.status, retryAfter: fault.retryAfter }
					: { kind: fault.kind as FaultKind };
			return { action, after: fault.after, label: actionLabel(action) };
		}
		return this.random(config);
	}

	private random(config: SandboxConfig): FaultDecision | undefined {
		const roll = this.rng.next();
		const rates: [number, FaultKind | 'error'][] = [
			[config.errorRate, 'error'],
			[config.burst429Rate, '429-no-headers'],
			[config.dropRate, 'drop'],
			[config.malformedRate, 'malformed'],
			[config.falseSuccessRate, 'false-success'],
		];
		let edge = 0;
		for (const [rate, kind] of rates) {
			if (roll < edge + rate) {
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
 */
export function faultReply(
	action: FaultAction,
	limitHeaders: Record<string, string>,
	config: SandboxConfig,
	now: number,
): Reply {
	if ('status' in action) {
		if (action.status !== 429) {
			const message = STATUS_MESSAGES[action.status] ?? `Injected error ${action.status}`;
			return { status: action.status, body: errorBody(action.status, message), headers: limitHeaders };
		}
		// A 429 that tells the truth about when to come back, like a real limit hit.
		const resetAt = now + action.retryAfter * 1000;
		const headers = {
			...rateLimitHeaders({ limit: config.rateLimit, remaining: 0, resetAt }, now, config.resetFormat),
			'Retry-After': String(action.retryAfter),
		};
		return { status: 429, body: errorBody(429, `Rate limit exceeded, retry in ${action.retryAfter} s`), headers };
	}
	switch (action.kind) {
		case 'drop':
			return { status: 0, body: null };
		case 'malformed':
			return { status: 200, body: null, raw: MALFORMED_BODY, headers: limitHeaders };
		case 'false-success':
			return { status: 200, body: errorBody(500, 'The operation could not be completed'), headers: limitHeaders };
		case '429-no-headers':
			return { status: 429, body: errorBody(429, 'Too many requests') };
	}
}
