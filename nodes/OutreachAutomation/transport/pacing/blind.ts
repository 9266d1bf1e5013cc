/**
 * Pacing for a service whose answers take longer than its window: every answer tells of a window
 * already over, so no probe can open one for the others to follow. Windows are projected from the last
 * reset told and their length; each process sends a budget per window, spread over it, and the budget
 * follows what the late answers say about the windows they were counted in (AIMD, as TCP does with a
 * delayed signal): it doubles from a small start while windows stay half empty, then grows by a fixed
 * step, and shrinks by a ratio after a window that was refused or nearly full. Only a window sent
 * after the last change may change the budget again, so a change waits for its own answers.
 */

/** After a nearly full window the budget keeps this part of itself; after a refused one, no more
 * than passed. Every process shrinks by the same ratio, so their shares converge on equal ones. */
const SHRINK = 0.85;
/** A window with less than this part of the limit left counts as full: shrink before any 429. */
const FULL_PART = 0.05;
/** The budget starts at this part of the limit (as many processes may be starting together), and
 * grows by as much per step once past slow start: the same step for every process. */
const START_PART = 1 / 64;
/** Slow start doubles the budget while a window had more than this part of the limit left at the
 * last own request: doubled, all would still fit. */
const DOUBLE_WHILE_LEFT = 0.55;
/** The least budget: one request every so many windows. */
const MIN_BUDGET = 1 / 64;
/** Probes answered after their window ended, in a row, that start the mode. */
const LATE_PROBES = 2;
/** Answers this much shorter than the window end the mode (hysteresis against the entry). */
const LEAVE_AT_PART = 1 / 3;

/** Own requests of one projected window: the least `remaining` told, how many sent, refused (429) and
 * not yet answered, and when the first went. */
interface Sent {
	low: number;
	sent: number;
	refused: number;
	unanswered: number;
	startAt: number;
}
/** Windows whose answers never all came (hung) are forgotten past this many. */
const MAX_WINDOWS = 64;

/** What the policy may read. */
export type BlindView = Readonly<Pick<Blind, 'active' | 'nextAt'>>;

export class Blind {
	private on = false;
	/** Probes answered after their window ended, in a row. */
	private lateProbes = 0;
	/** The longest window seen, and the latest reset told: windows are projected from them. */
	private windowMs = 0;
	private resetAt = 0;
	private limit = 0;
	/** Own requests per window; below one, one every so many windows. */
	private budget = 0;
	private slowStart = true;
	/** When the budget last changed: only windows sent after it may change it again. */
	private changedAt = 0;
	/** The projected window requests now go in, its credit, and requests sent in it. */
	private endsAt = 0;
	private credit = 0;
	private sentIn = 0;
	private readonly windows = new Map<number, Sent>();

	get active(): boolean {
		return this.on;
	}

	/** A probe was answered `late` (after the window it names surely ended) or not: whether answers
	 * are slower than windows (one late probe may have joined a window near its end). */
	probeAnswered(late: boolean): boolean {
		this.lateProbes = late ? this.lateProbes + 1 : 0;
		return this.lateProbes >= LATE_PROBES;
	}

	/** Answers come after the window they were counted in ended. */
	enter(limit: number, resetAt: number, windowMs: number, now: number): void {
		this.on = true;
		this.limit = Math.max(1, limit);
		this.resetAt = resetAt;
		this.windowMs = Math.max(1, windowMs);
		this.budget = Math.max(MIN_BUDGET, this.limit * START_PART);
		this.slowStart = true;
		this.changedAt = now;
		this.endsAt = 0;
		this.windows.clear();
	}

	/** Whether answers now come well within a window: the usual pacing takes over again. */
	leaves(answerMs: number | undefined): boolean {
		if (answerMs === undefined || answerMs >= this.windowMs * LEAVE_AT_PART) return false;
		this.on = false;
		this.lateProbes = 0;
		this.windows.clear();
		return true;
	}

	/** When the projected window that holds `now` ends. */
	private projectedEnd(now: number): number {
		const passed = Math.floor((now - this.resetAt) / this.windowMs) + 1;
		return this.resetAt + Math.max(1, passed) * this.windowMs;
	}

	/** The projected window that holds `now` began: credit for every window gone by since the last
	 * look, as much as one window holds. */
	roll(now: number): void {
		const end = this.projectedEnd(now);
		if (end === this.endsAt) return;
		const windows = this.endsAt ? Math.max(1, Math.round((end - this.endsAt) / this.windowMs)) : 1;
		this.endsAt = end;
		this.credit = Math.min(Math.max(1, this.budget), this.credit + windows * this.budget);
		this.sentIn = 0;
	}

	/** When the next request may go (now or earlier: it may go now); `roll(now)` came first. */
	nextAt(now: number): number {
		const end = this.endsAt;
		// Less than one a window: the window in which the credit comes to one.
		if (this.credit < 1)
			return end + (Math.ceil((1 - this.credit) / this.budget) - 1) * this.windowMs;
		// Spread over the window: a burst would meet the others' at its start.
		const spread = this.windowMs / Math.max(1, this.budget);
		return Math.max(now, end - this.windowMs + this.sentIn * spread);
	}

	/** A request granted was not sent after all. */
	refund(mark: number, now: number): void {
		if (mark === this.endsAt) {
			this.credit += 1;
			this.sentIn--;
		}
		this.answered(mark, now);
	}

	/** A request goes in the current projected window: returns the window's mark for its answer. */
	take(now: number): number {
		this.credit -= 1;
		this.sentIn++;
		let sent = this.windows.get(this.endsAt);
		if (!sent) {
			sent = { low: Infinity, sent: 0, refused: 0, unanswered: 0, startAt: now };
			this.windows.set(this.endsAt, sent);
			if (this.windows.size > MAX_WINDOWS) this.windows.delete(this.windows.keys().next().value!);
		}
		sent.unanswered++;
		sent.sent++;
		return this.endsAt;
	}

	/** An answer (undefined: none will come) to a request sent in window `mark`: `remaining` told,
	 * refused (429), the reset told. Once all of a window's are in, it changes the budget. */
	answered(
		mark: number,
		now: number,
		told?: { remaining?: number; refused: boolean; resetAt?: number; sentAt?: number },
	): void {
		if (told?.resetAt !== undefined && told.resetAt > this.resetAt) this.resetAt = told.resetAt;
		// A window sent into at its start shows its whole length (the first may have been joined late).
		if (told?.resetAt !== undefined && told.sentAt !== undefined && !told.refused)
			this.windowMs = Math.max(this.windowMs, told.resetAt - told.sentAt);
		const sent = this.windows.get(mark);
		if (!sent) return;
		if (told?.refused) sent.refused++;
		if (told?.remaining !== undefined) sent.low = Math.min(sent.low, told.remaining);
		if (--sent.unanswered > 0) return;
		this.windows.delete(mark);
		this.settle(sent, now);
	}

	/** What a window whose answers are all in showed changes the budget. */
	private settle(sent: Sent, now: number): void {
		if (sent.low === Infinity && sent.refused === 0) return;
		if (sent.startAt < this.changedAt) return;
		const full = sent.refused > 0 || sent.low < this.limit * FULL_PART;
		if (full) {
			// Refused: no more than passed; nearly full: a step back.
			const passed = (sent.sent - sent.refused) / Math.max(1, sent.sent);
			this.budget = Math.max(MIN_BUDGET, this.budget * Math.min(SHRINK, passed));
			this.slowStart = false;
		} else if (this.slowStart && sent.low >= this.limit * DOUBLE_WHILE_LEFT) this.budget *= 2;
		else {
			this.slowStart = false;
			this.budget += Math.max(MIN_BUDGET, this.limit * START_PART);
		}
		this.budget = Math.min(this.budget, this.limit);
		this.changedAt = now;
	}
}
