/**
 * Pacing without rate-limit headers: a budget per span of time, from the documented limit, learnt from
 * each 429 (what passed in the span before it, until when it says to wait). A span opens with its first
 * request, as a server's window does. After a clean full span the budget grows by a tenth; each growth
 * a 429 proves wrong doubles the clean spans the next waits for, so a limit found stays found. A 429
 * naming no time is waited out by the whole key, the wait found by doubling, one request going first.
 */
import { ASSUMED_RATE_LIMIT, ASSUMED_WINDOW_MS } from '../constants';

/** However often growth failed, it is tried again after this many clean spans (the limit may rise). */
const MAX_GROW_EVERY = 32;
/** A span learnt from a 429 is never taken shorter than this (a Retry-After names whole seconds). */
const MIN_SPAN_MS = 1000;
/** A guessed wait that proved long enough is tried this much shorter next time (settles near the span). */
const GUESS_SHRINK = 0.75;

export class Span {
	budget = ASSUMED_RATE_LIMIT;
	spanMs = ASSUMED_WINDOW_MS;
	/** Learnt from a 429 (until then requests grow by slow start). */
	learnt = false;
	start = 0;
	sent = 0;
	passed = 0;
	limited = false;
	open = false;
	/** Clean full spans before the budget may grow again, and how many have passed since. */
	private growEvery = 1;
	private clean = 0;
	/** Whether the running span's budget was just grown (a 429 in it proves that growth wrong). */
	private grown = false;
	/** How long a 429 that names no time is waited out (doubled while such waits prove too short). */
	private guessMs = MIN_SPAN_MS;
	/** After such a wait the span's end is a guess: one request goes first, the rest once it passes. */
	private unsure = false;

	/** When the running span ends, or when the next may open (a span is closed after a 429). */
	end(): number {
		return this.open ? this.start + this.spanMs : this.start;
	}

	/** Opens a span with the request about to be sent. */
	openAt(now: number): void {
		this.grown = false;
		if (this.open && !this.limited && this.sent >= this.budget && ++this.clean >= this.growEvery) {
			this.budget += Math.max(1, Math.floor(this.budget / 10));
			this.clean = 0;
			this.grown = true;
		}
		this.start = now;
		this.sent = 0;
		this.passed = 0;
		this.limited = false;
		this.open = true;
	}

	hasRoom(): boolean {
		return this.sent < (this.unsure ? 1 : this.budget);
	}

	/** A request of the running span is sent. */
	take(): void {
		this.sent++;
	}

	/** A request passed (answered, not 429). */
	pass(): void {
		this.passed++;
		// The first after a guessed wait: long enough this time, so try a shorter one next time.
		if (this.unsure && this.passed === 1)
			this.guessMs = Math.max(MIN_SPAN_MS, Math.round(this.guessMs * GUESS_SHRINK));
		this.unsure = false;
	}

	/** A request counted at `sentAt` was not sent after all: its place in the span is free again. */
	refund(sentAt: number): void {
		if (this.open && sentAt >= this.start && this.sent > 0) this.sent--;
	}

	/** A 429 naming no time: until when the key waits; doubled if none of the span passed. */
	guess(now: number): number {
		if (this.open && this.passed === 0)
			this.guessMs = Math.min(ASSUMED_WINDOW_MS, this.guessMs * 2);
		this.unsure = true;
		return now + this.guessMs;
	}

	/** A 429: the budget is what passed, the span ends at `until`; its burst's later 429s push it. */
	learn(until: number): void {
		if (this.open) {
			if (this.grown) this.growEvery = Math.min(MAX_GROW_EVERY, this.growEvery * 2);
			this.grown = false;
			this.clean = 0;
			if (this.passed > 0) this.budget = this.passed;
			this.spanMs = Math.max(MIN_SPAN_MS, until - this.start);
			this.open = false;
			this.learnt = true;
		}
		this.start = Math.max(this.start, until);
		this.sent = 0;
		this.passed = 0;
		this.limited = true;
	}
}
