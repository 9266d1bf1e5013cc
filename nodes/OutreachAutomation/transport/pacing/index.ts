/**
 * Rate-limit pacing, shared by every request of this process on one credential. A process knows its own
 * requests and what each answer says; it cannot see other processes on the key and shares no memory
 * with them. What the window knows (window.ts) is written only by observe.ts, from events: answers,
 * 429s, grants, slots given back, the clock. Requests wait in one queue per key (queue.ts); when an
 * answer comes, a request finds the queue empty or the key's one timer rings, the pump asks the policy
 * (policy.ts, a pure function of the window) about the head and passes its decision to observe.ts.
 * After every reset one probe goes first and the others wait for what it is told.
 */
import { WINDOW_IDLE_EXPIRY_MS } from '../constants';
import { now as currentTime } from '../clock';
import type { HeaderBag } from './headers';
import { observe } from './observe';
import { decide } from './policy';
import { Alarm, SlotQueue } from './queue';
import { Window, type Slot, type WindowView } from './window';

export { parseResetHeader, parseRetryAfter, readRateLimitHeaders } from './headers';
export type { Slot } from './window';

/** A timer this late says the process was busy: answers may wait to be read, so none is hung yet. */
const STALLED_MS = 100;

/** One key: what this process knows of its window, its queue of requests, and its one timer. */
class Key {
	/** Written only through observe(). */
	readonly window = new Window();
	readonly queue = new SlotQueue();
	readonly alarm = new Alarm((lateMs) => this.look(lateMs < STALLED_MS));
	/** Before any answer, the look that gives up the key's first request as hung: a timer of its own,
	 * cancelled by the answer. On the one timer it would stay set after the answer (a later look does
	 * not replace an earlier one): a look nothing wanted, ahead of the reset's. */
	readonly firstAlarm = new Alarm((lateMs) => this.look(lateMs < STALLED_MS));
	/** When a request of this process last used the key (idle keys are forgotten). */
	lastUsed = 0;

	get idle(): boolean {
		return this.queue.size === 0 && this.window.quiet;
	}

	/**
	 * Pumps the queue. Should the pacing itself fail, its waiting requests fail with the error rather
	 * than wait for a look that would never come (a throw from the timer would reach no one).
	 */
	look(expireHung = false): void {
		try {
			this.pump(expireHung);
		} catch (error) {
			this.alarm.cancel();
			this.firstAlarm.cancel();
			const reason = error instanceof Error ? error.message : String(error);
			this.queue.failAll(
				new Error(
					`The rate-limit pacing failed (${reason}), so the request was not sent: run it again`,
				),
			);
		}
	}

	/** Grants slots to the head while the policy allows, then sets the timer for the next look (none:
	 * an answer will come). Only a timer on time gives up on hung requests. */
	private pump(expireHung: boolean): void {
		const window = this.window;
		observe(window, { kind: 'look', now: currentTime(), expireHung });
		for (;;) {
			if (!this.queue.peek()) {
				this.alarm.cancel();
				this.firstAlarm.cancel();
				return;
			}
			const now = currentTime();
			observe(window, { kind: 'tick', now });
			const decision = decide(window, now, this.queue.size);
			if ('change' in decision) {
				observe(window, { kind: 'resume', remaining: decision.remaining });
				continue;
			}
			if ('draw' in decision) {
				observe(window, { kind: 'draw', chance: decision.draw });
				continue;
			}
			const slot = observe(window, { kind: 'grant', decision, now });
			if (slot) {
				this.queue.serve(slot);
				continue;
			}
			// Look again when the oldest in flight counts as hung, if that is sooner.
			const hungAt = window.flight.hungAt();
			const at =
				'at' in decision && decision.at !== undefined
					? Math.min(decision.at, hungAt ?? Infinity)
					: hungAt;
			if (at !== undefined) this.alarm.set(at, now);
			const firstHungAt = window.flight.firstHungAt();
			if (firstHungAt === undefined) this.firstAlarm.cancel();
			else this.firstAlarm.set(firstHungAt, now);
			return;
		}
	}
}

const keys = new Map<string, Key>();
/** How often the keys are looked over for windows nobody used for a while. */
const SWEEP_EVERY_MS = 60_000;
let lastSweep = 0;

/** Forgets windows nobody used for a while: keys of a long-lived n8n do not pile up. */
function sweep(now: number) {
	if (now - lastSweep < SWEEP_EVERY_MS) return;
	lastSweep = now;
	for (const [name, key] of keys) {
		if (key.idle && now - key.lastUsed > WINDOW_IDLE_EXPIRY_MS) keys.delete(name);
	}
}

function keyFor(name: string, now = currentTime()): Key {
	sweep(now);
	let key = keys.get(name);
	if (!key) {
		key = new Key();
		keys.set(name, key);
	}
	key.lastUsed = now;
	return key;
}

/** What this process knows of a key's window (undefined when it knows nothing). */
export function peekWindow(key: string): WindowView | undefined {
	return keys.get(key)?.window;
}

/** For tests: the window itself, to set up a case or read what the policy does not. */
export function windowForTests(key: string): Window | undefined {
	return keys.get(key)?.window;
}

/** For tests: a key's waiting requests, and the executions listening for a Stop among them. */
export function peekMechanics(key: string): { listeners: number; queued: number } | undefined {
	const found = keys.get(key);
	return found && { listeners: found.queue.listeners(), queued: found.queue.size };
}

/** For tests: how many windows are remembered. */
export function rememberedWindows(): number {
	return keys.size;
}

/** Waits for this request's turn and a slot; undefined once `signal` aborts. A slot with
 * `tooLongUntil` says the wait would be longer than we may wait. */
export async function acquireSlot(name: string, signal?: AbortSignal): Promise<Slot | undefined> {
	if (signal?.aborted) return undefined;
	const key = keyFor(name);
	return await new Promise<Slot | undefined>((resolve, reject) => {
		const first = key.queue.size === 0;
		key.queue.push({ resolve, reject, signal });
		// Behind others, the look the head waits for serves this one too.
		if (first) key.look();
	});
}

/** Feeds an answer's headers (any status, or none after a network error) back into the window. */
export function releaseSlot(
	key: string,
	slot: Slot,
	headers: HeaderBag,
	now = currentTime(),
	status?: number,
): void {
	const found = keyFor(key, now);
	observe(found.window, { kind: 'answer', slot, headers, now, status });
	// After a 429 the caller's markExhausted records the spent window first, then looks. (A headerless
	// span looks here, before the 429 is learnt: its estimate paces better that way.)
	if (status !== 429 || found.window.unpaced) found.look();
}

/** How far the key has moved: own answers on their merits, and probes others crowded out. */
export function keyProgress(name: string): { answered: number; crowdedOut: number } {
	const window = keys.get(name)?.window;
	return { answered: window?.progress ?? 0, crowdedOut: window?.crowdedOut ?? 0 };
}

/** A slot given back unused (the request was refused before sending): someone else may have it. */
export function cancelSlot(key: string, slot: Slot): void {
	const found = keyFor(key);
	observe(found.window, { kind: 'cancel', slot, now: currentTime() });
	found.look();
}

/** A 429 (to `slot`): every request of this key waits until the time returned (see observeRefusal). */
export function markExhausted(
	key: string,
	headers: HeaderBag,
	fallback: number,
	now = currentTime(),
	slot?: Slot,
): number {
	const found = keyFor(key, now);
	const window = found.window;
	const { until } = observe(window, { kind: 'refusal', slot, headers, fallback, now });
	found.look();
	// A 429 that says nothing of this window: the request waits its turn like any other.
	if (until === undefined)
		return window.remaining === 0 && window.resetAt !== undefined ? window.resetAt : now;
	return until;
}

/** For tests: forget windows idle for longer than the expiry, as the periodic sweep does. */
export function sweepRateLimitState(now: number): void {
	lastSweep = 0;
	sweep(now);
}

/** For tests: forget every window. */
export function resetRateLimitState(): void {
	for (const key of keys.values()) {
		key.alarm.cancel();
		key.firstAlarm.cancel();
	}
	keys.clear();
	lastSweep = 0;
}
