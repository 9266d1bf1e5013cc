/**
 * Pacing without rate-limit headers: a budget per span of time, from the documented limit, learnt from
 * 429s. A span opens with its first request, as a server's window does. The first 429 sets the budget
 * to what passed in its span and the span to its `Retry-After`; then the budget grows by a fixed step
 * after each clean full span and shrinks by a ratio at each 429 (AIMD), so processes that see only
 * their own 429s converge on equal shares; a 429 in the span right after a step only takes that step
 * back. A later 429 neither lengthens the span nor holds the key past the span's end. A 429 naming no
 * time is waited out by the whole key (the wait found by doubling), one request going first.
 */
import { ASSUMED_RATE_LIMIT, ASSUMED_WINDOW_MS } from '../constants';

/** At a 429 the budget keeps this part of itself: the others' shares and a lower limit fit again. */
const SHRINK = 0.85;
/** The budget grows by this part of the first learnt one after each clean full span. */
const GROW_PART = 1 / 12;
/** A span learnt from a 429 is never taken shorter than this (a Retry-After names whole seconds). */
const MIN_SPAN_MS = 1000;
/** A span's requests are spread over this part of it: spread to its end, the last of them open the
 * server's next window early, and the next span's requests overrun it. */
const SPREAD_PART = 0.9;
/** A guessed wait that proved long enough is tried this much shorter next time (settles near the span). */
const GUESS_SHRINK = 0.75;

/** What the policy may read. */
export type SpanView = Readonly<
	Pick<Span, 'budget' | 'spanMs' | 'learnt' | 'start' | 'sent' | 'end' | 'hasRoom' | 'spreadAt'>
>;

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
	/** What a clean full span adds: the same for every process on the key, as near as they can tell. */
	private step = 1;
	/** How long a 429 that names no time is waited out (doubled while such waits prove too short). */
	private guessMs = MIN_SPAN_MS;
	/** After such a wait the span's end is a guess: one request goes first, the rest once it passes. */
	private unsure = false;
	/** Between the first 429 and the next span: answers still coming passed in the span it ended. */
	private learning = false;
	/** The running span's budget was grown: a 429 in it undoes that step rather than a part of all. */
	private grown = false;

	/** When the running span ends, or when the next may open (a span is closed after a 429). */
	end(): number {
		return this.open ? this.start + this.spanMs : this.start;
	}

	/** Opens a span with the request about to be sent. */
	openAt(now: number): void {
		this.grown = this.open && !this.limited && this.sent >= this.budget;
		if (this.grown) this.budget += this.step;
		this.learning = false;
		this.start = now;
		this.sent = 0;
		this.passed = 0;
		this.limited = false;
		this.open = true;
	}

	hasRoom(): boolean {
		return this.sent < (this.unsure ? 1 : this.budget);
	}

	/** With more to send than room, the next request's time: spread, so every process meets the limit
	 * near the window's end and each shrinks (a burst would leave the 429s to whoever starts later). */
	spreadAt(): number {
		return this.start + (this.sent * this.spanMs * SPREAD_PART) / this.budget;
	}

	/** A request of the running span is sent. */
	take(): void {
		this.sent++;
	}

	/** A request passed (answered, not 429). */
	pass(): void {
		this.passed++;
		if (this.learning) this.budget++;
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

	/** A 429: the budget shrinks (see SHRINK), the span ends at `until`; later 429s push that. Returns
	 * when the key may send again: for a 429 that `named` a time, a learnt span's end if sooner than
	 * `until` and still to come (a wait in whole seconds, rounded up, may end most of a second after the
	 * window does); a guessed wait is waited out whole. */
	learn(until: number, now: number, named = true, answerMs = 0): number {
		const spanEnd = this.start + this.spanMs;
		if (named && this.open && this.learnt && spanEnd > now) until = Math.min(until, spanEnd);
		if (this.open) {
			// The first 429 tells the window's length; a later one only that the span's requests overran
			// it (its wait, in whole seconds, may end most of a second after the window does).
			// A wait in whole seconds, rounded up, counts from the 429, not from the span's start: from
			// there to it, plus an answer's time (a margin for when requests arrive), is the window.
			if (!this.learnt)
				this.spanMs = Math.max(MIN_SPAN_MS, Math.min(until - this.start, until - now + answerMs));
			if (this.learnt && this.grown) this.budget -= this.step;
			else if (this.learnt) this.budget = Math.max(1, Math.floor(SHRINK * this.budget));
			else {
				if (this.passed > 0) this.budget = this.passed;
				this.learning = true;
				this.step = Math.max(1, Math.round(this.budget * GROW_PART));
			}
			this.open = false;
			this.learnt = true;
		}
		this.start = Math.max(this.start, until);
		this.sent = 0;
		this.passed = 0;
		this.limited = true;
		return this.start;
	}
}
