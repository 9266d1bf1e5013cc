/**
 * Where requests read the time, wait and draw lots: `Date.now`, n8n-workflow's `sleep` and
 * `Math.random` in n8n; in the simulator (test/sim) a virtual clock, so runs repeat exactly.
 */
import { sleep } from 'n8n-workflow';

export interface Clock {
	now(): number;
	/** Resolves `ms` from now; rejects once `signal` aborts (n8n-workflow's `sleep`). */
	sleep(ms: number, signal?: AbortSignal): Promise<void>;
	/** A number in [0, 1). */
	random(): number;
}

/** n8n's: the one the pacing runs on unless a test sets another. */
export const systemClock: Clock = { now: () => Date.now(), sleep, random: () => Math.random() };

let clock: Clock = systemClock;

export function now(): number {
	return clock.now();
}

export function random(): number {
	return clock.random();
}

export function sleepFor(ms: number, signal?: AbortSignal): Promise<void> {
	return clock.sleep(ms, signal);
}

/** For tests and the simulator: the clock the pacing runs on from now on (by default n8n's again). */
export function useClock(next: Clock = systemClock): void {
	clock = next;
}

/** `sleep` that ends at once when `signal` aborts and leaves neither listener nor timer behind. */
export async function pause(ms: number, signal?: AbortSignal): Promise<void> {
	if (signal?.aborted) return;
	const timer = new AbortController();
	let onAbort: (() => void) | undefined;
	const aborted = new Promise<void>((resolve) => {
		onAbort = () => {
			timer.abort();
			resolve();
		};
		signal?.addEventListener('abort', onAbort, { once: true });
	});
	try {
		await Promise.race([sleepFor(Math.max(0, ms), timer.signal).catch(() => undefined), aborted]);
	} finally {
		signal?.removeEventListener('abort', onAbort!);
		// Settles the race's other side, so no reaction is left waiting on it.
		onAbort!();
	}
}
