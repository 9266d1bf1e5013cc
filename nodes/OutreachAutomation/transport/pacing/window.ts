/**
 * What this process knows of one API key's rate-limit window: what the server last said (`remaining`,
 * the reset), its own requests in flight, and what it has inferred: others on the key (Share), the
 * limit of a server that sends no headers (Span), and whether a reset named in whole seconds is rounded
 * up or down.
 */
import { RESET_MARGIN_MS } from '../constants';
import type { RateLimitHeaders } from './headers';
import { Share } from './share';
import { Span } from './span';

export interface Slot {
	probe: boolean;
	epoch: number;
	/** Order of sending: tells which own requests went out after this one. */
	seq: number;
	/** Sent before a whole-second reset named, where a whole-second window would end (see setReset). */
	coarseTest?: boolean;
	/** Set instead of a slot when the reset is further away than we may wait. */
	tooLongUntil?: number;
}

/**
 * How to read a reset named in whole seconds. `aligned`: the server rounds it up and its window lasts
 * whole seconds, so a window this process opened ends exactly that many seconds after it opened it
 * (earlier than named). `padded`: anything else; the reset may be up to a second after the one named.
 */
export type Coarse = 'unknown' | 'aligned' | 'padded';

/** A whole-second reset rounded down may be up to this much later than named. */
const WHOLE_SECOND_MS = 1000;

export class Window {
	/** Requests this process may still send in the window: the server's figure less its own since. */
	remaining: number | undefined;
	/** The lowest `remaining` the server told in this window (own requests in flight not subtracted). */
	toldLow: number | undefined;
	/** When to consider the window over: the named reset, adjusted for how the server rounds it. */
	resetAt: number | undefined;
	/** The reset as the server named it, and whether in whole seconds. */
	namedReset: number | undefined;
	coarse = false;
	coarseMode: Coarse = 'unknown';
	/** When this process opened the current window with its probe (its answer's time), if it did. */
	opened: number | undefined;
	/** The window's length in whole seconds (ms), once `aligned`. */
	wholeMs: number | undefined;
	/** The largest window limit seen: a probe told one less opened its window. */
	limit = 0;
	/** The reset an alarm is set for (see nextAnswer). */
	alarmAt: number | undefined;
	/** Whether the next probe tests the whole-second reading (the wait ends before the named second). */
	testDue = false;
	probing = false;
	/** Counts windows seen; a slot remembers the one it was sent in. */
	epoch = 0;
	/** Requests sent and not yet answered: sequence number -> the window it was sent in. */
	readonly inFlight = new Map<number, number>();
	private seq = 0;
	readonly share = new Share();
	/** Set when the server sends no rate-limit headers: requests are paced by `span` instead. */
	unpaced = false;
	readonly span = new Span();
	lastUsed = 0;
	private waiters: Array<() => void> = [];

	get idle(): boolean {
		return this.inFlight.size === 0 && this.waiters.length === 0 && !this.probing;
	}

	/** Own requests of the current window still unanswered. */
	inFlightNow(): number {
		return this.inFlightOf(this.epoch);
	}

	/** Own requests of window `epoch` still unanswered. */
	inFlightOf(epoch: number): number {
		let count = 0;
		for (const of of this.inFlight.values()) if (of === epoch) count++;
		return count;
	}

	/** Requests of earlier windows still unanswered: the server may count them in this one. */
	stragglers(): number {
		let count = 0;
		for (const epoch of this.inFlight.values()) if (epoch < this.epoch) count++;
		return count;
	}

	/** Own requests still unanswered that were sent after `slot` (the server counts them after it). */
	sentAfter(slot: Slot): number {
		let count = 0;
		for (const seq of this.inFlight.keys()) if (seq > slot.seq) count++;
		return count;
	}

	/** The window ended (its reset passed, or the server started another): nothing is known of the next. */
	roll(): void {
		this.share.newWindow(this.inFlightNow());
		this.remaining = undefined;
		this.toldLow = undefined;
		this.resetAt = undefined;
		this.epoch++;
	}

	/**
	 * Takes the reset an answer named. Exact resets are waited out with a small margin. One named in
	 * whole seconds may be rounded up or down; but a window this process opened, on a server whose
	 * windows last whole seconds and that rounds up, ends exactly so many seconds after it opened
	 * (often most of a second before the named one). The first such window tests that (at most one
	 * 429); a server that fails it is waited out to a second past the named reset. A request never
	 * waits more than a second past the reset named.
	 */
	setReset(told: RateLimitHeaders, now: number): void {
		const named = told.resetAt ?? now + WHOLE_SECOND_MS;
		this.namedReset = named;
		this.coarse = told.resetCoarse === true;
		this.testDue = false;
		if (!this.coarse) {
			this.resetAt = named + RESET_MARGIN_MS;
		} else if (this.coarseMode === 'padded') {
			this.resetAt = named + WHOLE_SECOND_MS;
		} else if (this.coarseMode === 'aligned') {
			const end = this.opened !== undefined ? this.opened + this.wholeMs! : named;
			this.resetAt = Math.min(end, named) + RESET_MARGIN_MS;
		} else if (this.opened !== undefined && named - this.opened >= WHOLE_SECOND_MS) {
			this.wholeMs = Math.floor((named - this.opened) / WHOLE_SECOND_MS) * WHOLE_SECOND_MS;
			this.resetAt = this.opened + this.wholeMs + RESET_MARGIN_MS;
			this.testDue = true;
		} else {
			this.resetAt = named + WHOLE_SECOND_MS;
		}
	}

	/** When a 429 says the window is spent: its reset read as `setReset` would, else its Retry-After. */
	exhaustedUntil(told: RateLimitHeaders): number | undefined {
		// An exact reset says more than a Retry-After in whole seconds.
		if (told.resetAt !== undefined && !told.resetCoarse) return told.resetAt + RESET_MARGIN_MS;
		if (told.retryAt !== undefined) return told.retryAt;
		if (told.resetAt === undefined) return undefined;
		if (this.coarseMode === 'aligned') return told.resetAt + RESET_MARGIN_MS;
		return told.resetAt + WHOLE_SECOND_MS;
	}

	/** What the test probe's answer showed: a new window (aligned), or a 429 or the old one (padded). */
	learnCoarse(status: number | undefined, told: RateLimitHeaders, previousNamed: number): void {
		if (this.coarseMode !== 'unknown') return;
		const fresh =
			status !== 429 &&
			told.resetAt !== undefined &&
			told.resetAt > previousNamed + WHOLE_SECOND_MS / 2;
		this.coarseMode = fresh ? 'aligned' : 'padded';
	}

	send(probe: boolean): Slot {
		const slot: Slot = { probe, epoch: this.epoch, seq: ++this.seq };
		if (probe && this.testDue) {
			slot.coarseTest = true;
			this.testDue = false;
		}
		this.inFlight.set(slot.seq, slot.epoch);
		return slot;
	}

	answered(slot: Slot): void {
		this.inFlight.delete(slot.seq);
	}

	wake(): void {
		const waiters = this.waiters;
		this.waiters = [];
		for (const resolve of waiters) resolve();
	}

	/** Resolves at the next answer (or any other change worth a new look). */
	async change(): Promise<void> {
		await new Promise<void>((resolve) => this.waiters.push(resolve));
	}
}
