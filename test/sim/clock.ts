/**
 * A virtual clock for the pacing's clock seam (nodes/.../transport/clock.ts): time moves only from one
 * scheduled event to the next, and after each event every promise reaction it caused runs before the
 * next event (as Node runs the microtasks after each timer). Events at the same instant run in the order
 * they were scheduled. With a seeded random source, a run is the same every time, request for request.
 */
import type { Clock } from '../../nodes/OutreachAutomation/transport/clock';
import { Random } from '../sandbox/random';

interface Event {
	at: number;
	order: number;
	fire: () => void;
	cancelled: boolean;
}

/** A binary heap of events, earliest first (ties: scheduled first). */
class EventHeap {
	private readonly items: Event[] = [];

	get size(): number {
		return this.items.length;
	}

	private before(a: Event, b: Event): boolean {
		return a.at < b.at || (a.at === b.at && a.order < b.order);
	}

	push(event: Event): void {
		const items = this.items;
		items.push(event);
		let i = items.length - 1;
		while (i > 0) {
			const parent = (i - 1) >> 1;
			if (!this.before(items[i], items[parent])) break;
			[items[i], items[parent]] = [items[parent], items[i]];
			i = parent;
		}
	}

	pop(): Event | undefined {
		const items = this.items;
		const top = items[0];
		const last = items.pop();
		if (items.length && last) {
			items[0] = last;
			let i = 0;
			for (;;) {
				const left = 2 * i + 1;
				const right = left + 1;
				let least = i;
				if (left < items.length && this.before(items[left], items[least])) least = left;
				if (right < items.length && this.before(items[right], items[least])) least = right;
				if (least === i) break;
				[items[i], items[least]] = [items[least], items[i]];
				i = least;
			}
		}
		return top;
	}
}

/** What a sleep cut short rejects with (one object: an Error per abort would cost its stack each time). */
const ABORTED = new Error('The wait was aborted');

/** Lets every promise reaction queued so far (and those they queue) run. */
const settle = async () => await new Promise<void>((resolve) => setImmediate(resolve));

export class VirtualClock implements Clock {
	private time: number;
	private order = 0;
	private readonly events = new EventHeap();
	readonly rng: Random;
	/** Events fired so far. */
	fired = 0;

	constructor(start: number, seed: number) {
		this.time = start;
		this.rng = new Random(seed);
	}

	now(): number {
		return this.time;
	}

	random(): number {
		return this.rng.next();
	}

	/** Runs `fire` at `at` (not before now); returns a handle that cancels it. */
	at(at: number, fire: () => void): { cancel(): void } {
		const event: Event = {
			at: Math.max(at, this.time),
			order: this.order++,
			fire,
			cancelled: false,
		};
		this.events.push(event);
		return {
			cancel: () => {
				event.cancelled = true;
			},
		};
	}

	async sleep(ms: number, signal?: AbortSignal): Promise<void> {
		return await new Promise<void>((resolve, reject) => {
			if (signal?.aborted) {
				reject(ABORTED);
				return;
			}
			const onAbort = () => {
				timer.cancel();
				reject(ABORTED);
			};
			const timer = this.at(this.time + Math.max(0, ms), () => {
				signal?.removeEventListener('abort', onAbort);
				resolve();
			});
			signal?.addEventListener('abort', onAbort, { once: true });
		});
	}

	/**
	 * Fires events in order until none is left, `done()` says so, or the time passes `until`. Returns
	 * whether events were left (a run cut short).
	 */
	async run(until: number, done: () => boolean): Promise<boolean> {
		await settle();
		while (this.events.size && !done()) {
			const event = this.events.pop()!;
			if (event.cancelled) continue;
			if (event.at > until) {
				// Not due yet: it stays for a later run.
				this.events.push(event);
				return true;
			}
			this.time = event.at;
			this.fired++;
			event.fire();
			await settle();
		}
		return false;
	}
}
