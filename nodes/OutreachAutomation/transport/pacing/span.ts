/**
 * Pacing without rate-limit headers: a budget of requests per span of time, starting from the
 * documented limit (100 a minute) and learnt from each 429: how many requests passed in the span before
 * it, and until when it says to wait. A span opens with its first request, as a server's window opens
 * with the first request it counts, never at a nominal time: a span opened early drifts ahead of the
 * server's window and runs into it. After a clean full span the budget grows by a tenth, in case the
 * estimate was low; each growth a 429 proves wrong doubles the clean spans the next one waits for, so
 * a limit found stays found (a few 429s now and then, not every other span). A 429 that names no time
 * at all is waited out by the key as a whole, the wait found by doubling, and one request tries the
 * server before the rest of the budget follows.
 */
import { ASSUMED_RATE_LIMIT, ASSUMED_WINDOW_MS } from '../constants';

/** However often growth failed, it is tried again after this many clean spans (the limit may rise). */
const MAX_GROW_EVERY = 32;
/** A span learnt from a 429 is never taken shorter than this (a Retry-After names whole seconds). */
const MIN_SPAN_MS = 1000;
/**
 * A wait for a 429 that names no time, once it proved long enough, is tried this much shorter next
 * time: less than the doubling that finds it again, so it settles near the window's length.
 */
const GUESS_SHRINK = 0.75;

export class Span {
	budget = ASSUMED_RATE_LIMIT;
	spanMs = ASSUMED_WINDOW_MS;
	/** Whether budget and span were learnt from a 429 (until then requests grow by slow start). */
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

	/** Whether one more request fits in the running span. */
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

	/**
	 * A 429 that names no time (no Retry-After): until when to wait, the same for every request of the
	 * key. A span refused before anything in it passed shows the last wait was too short: the wait
	 * doubles, up to the documented window, so the span's length is found in a few steps rather than
	 * every request retrying on its own short backoff (each 429 then pushing the window's end further).
	 */
	guess(now: number): number {
		if (this.open && this.passed === 0)
			this.guessMs = Math.min(ASSUMED_WINDOW_MS, this.guessMs * 2);
		this.unsure = true;
		return now + this.guessMs;
	}

	/**
	 * A 429 without rate-limit headers: what passed in this span is the budget, the span lasts until
	 * `until`, and the next one opens with the first request after it. Later 429s of the same burst only
	 * push that back (they say nothing about the span's length).
	 */
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
