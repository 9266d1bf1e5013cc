/** A FIFO queue per key and its one timer. Arrival and grant cost O(1); a cancelled execution's
 * waiters leave at once (one abort listener per execution); served ones leave nothing. */
import { now as currentTime, sleepFor } from '../clock';
import type { Slot } from './window';

export interface Waiter {
	resolve: (slot: Slot | undefined) => void;
	reject: (error: Error) => void;
	signal: AbortSignal | undefined;
}

/** Emptied places at the front are dropped in one go once there are this many. */
const COMPACT_AFTER = 1024;

/** One execution's signal: its waiters in this queue, and the one listener that removes them on Stop. */
interface Registration {
	waiting: number;
	onAbort: () => void;
}

export class SlotQueue {
	/** Waiting in order from `head`; a place is emptied when served, so nothing served is kept. */
	private items: Array<Waiter | undefined> = [];
	private head = 0;
	/** Waiters still queued (not served, not cancelled). */
	size = 0;
	private readonly signals = new Map<AbortSignal, Registration>();

	push(waiter: Waiter): void {
		this.items.push(waiter);
		this.size++;
		const signal = waiter.signal;
		if (!signal) return;
		const registration = this.signals.get(signal);
		if (registration) registration.waiting++;
		else {
			const onAbort = () => this.cancel(signal);
			this.signals.set(signal, { waiting: 1, onAbort });
			signal.addEventListener('abort', onAbort, { once: true });
		}
	}

	peek(): Waiter | undefined {
		while (this.head < this.items.length && this.items[this.head] === undefined) this.head++;
		if (this.head >= COMPACT_AFTER) {
			this.items = this.items.slice(this.head);
			this.head = 0;
		}
		return this.items[this.head];
	}

	/** Takes the head out of the queue and hands it `slot`. */
	serve(slot: Slot | undefined): void {
		this.take()?.resolve(slot);
	}

	/** Every waiter leaves with `error`: the pacing failed, and none would ever be served. */
	failAll(error: Error): void {
		for (let waiter = this.take(); waiter; waiter = this.take()) waiter.reject(error);
	}

	private take(): Waiter | undefined {
		const waiter = this.peek();
		if (!waiter) return undefined;
		this.items[this.head++] = undefined;
		this.leave(waiter);
		return waiter;
	}

	private leave(waiter: Waiter): void {
		this.size--;
		const signal = waiter.signal;
		const registration = signal && this.signals.get(signal);
		if (!signal || !registration || --registration.waiting > 0) return;
		this.signals.delete(signal);
		signal.removeEventListener('abort', registration.onAbort);
	}

	/** The execution was cancelled: its waiters leave with no slot; the others keep their turns. */
	private cancel(signal: AbortSignal): void {
		const registration = this.signals.get(signal);
		if (!registration) return;
		for (let i = this.head; i < this.items.length && registration.waiting > 0; i++) {
			const waiter = this.items[i];
			if (!waiter || waiter.signal !== signal) continue;
			this.items[i] = undefined;
			this.leave(waiter);
			waiter.resolve(undefined);
		}
	}

	/** For tests: executions with a listener on their signal. */
	listeners(): number {
		return this.signals.size;
	}
}

/** A key's one timer, at the earliest look wanted: a later time does not replace an earlier one. */
export class Alarm {
	private at: number | undefined;
	private controller: AbortController | undefined;

	/** `ring(lateMs)`: how much later than asked the timer fired. */
	constructor(private readonly ring: (lateMs: number) => void) {}

	set(at: number, now: number): void {
		if (this.at !== undefined && this.at > now && this.at <= at) return;
		this.cancel();
		const controller = new AbortController();
		this.controller = controller;
		this.at = at;
		const delay = Math.max(0, at - now);
		// n8n-workflow's sleep clears its timer when the signal aborts (n8n 1.x lets it run out, harmlessly).
		sleepFor(delay, controller.signal).then(
			() => {
				if (this.controller !== controller) return;
				this.controller = undefined;
				this.at = undefined;
				this.ring(currentTime() - now - delay);
			},
			() => undefined,
		);
	}

	cancel(): void {
		this.controller?.abort();
		this.controller = undefined;
		this.at = undefined;
	}
}
