/**
 * Where a window the server names ends. Exact instants are waited out with a small margin. A reset in
 * whole seconds may be rounded either way: one probe at the named second tests it (a fresh window:
 * rounded up, until a later probe is refused in the old window; a 429 or the old window: down, waited
 * out a second past). Either way, a window this process opened is tested once at whole seconds after
 * it opened; if that holds, such windows end there (often most of a second before the latest
 * reading). Each test costs at most one 429.
 */
import { RESET_MARGIN_MS } from '../constants';
import type { RateLimitHeaders } from './headers';

export type Rounding = 'unknown' | 'up' | 'down';
export type Whole = 'unknown' | 'yes' | 'no';
export type Test = 'rounding' | 'whole';

/** A reset named in whole seconds may be this much earlier or later than the real one. */
export const WHOLE_SECOND_MS = 1000;
/** The rounding test goes this soon after the named second: only clock jitter, not a margin. */
const TEST_OFFSET_MS = 10;
/** A reset named this much later than the known one is another window's (see `resetFixed`). */
const SAME_RESET_COARSE_MS = 1000;
const SAME_RESET_EXACT_MS = 20;

export class Reset {
	/** The reset named for the current window, and for the window that ended. */
	named: number | undefined;
	ended: number | undefined;
	/** Whether the current one was named in whole seconds. */
	coarse = false;
	rounding: Rounding = 'unknown';
	whole: Whole = 'unknown';
	/** When this process's probe opened the current window, if it did; windows' length once tested. */
	opened: number | undefined;
	wholeMs: number | undefined;
	/** What the next probe tests, if anything. */
	testDue: Test | undefined;

	/** Takes the reset an answer of the current window names; returns when that window ends. */
	take(told: RateLimitHeaders, now: number): number {
		const named = told.resetAt ?? now + WHOLE_SECOND_MS;
		this.named = named;
		this.coarse = told.resetCoarse === true;
		this.testDue = undefined;
		if (!this.coarse) return named + RESET_MARGIN_MS;
		if (this.rounding === 'unknown') {
			this.testDue = 'rounding';
			return named + TEST_OFFSET_MS;
		}
		// The latest the window may end: rounded up, at the named second; rounded down, a second after.
		const latest = named + (this.rounding === 'up' ? RESET_MARGIN_MS : WHOLE_SECOND_MS);
		// A reading moved by the server's clock skew is a second off either way: only `latest` is sure.
		if (this.rounding === 'down' && told.skewed) return latest;
		const wholeEnd = this.wholeEnd(named);
		if (wholeEnd === undefined) return latest;
		if (this.whole === 'unknown') {
			this.wholeMs = wholeEnd - this.opened!;
			this.testDue = 'whole';
		}
		return wholeEnd + RESET_MARGIN_MS;
	}

	/**
	 * Whole seconds after this process opened the window, if that may be where it ends: at or before
	 * the named second when rounded up, within the second after it when rounded down.
	 */
	private wholeEnd(named: number): number | undefined {
		const opened = this.opened;
		if (opened === undefined || named - opened < WHOLE_SECOND_MS || this.whole === 'no')
			return undefined;
		const up = this.rounding === 'up';
		const seconds = (up ? Math.floor : Math.ceil)((named - opened) / WHOLE_SECOND_MS);
		const end = opened + (this.wholeMs ?? seconds * WHOLE_SECOND_MS);
		const fits = up ? end <= named : end > named && end < named + WHOLE_SECOND_MS;
		return fits ? end : undefined;
	}

	/** What a test probe's answer showed: a fresh window (the reading holds), or a 429 or the old one. */
	learn(test: Test, status: number | undefined, told: RateLimitHeaders): void {
		if (this.named === undefined) return;
		const fresh =
			status !== 429 &&
			told.resetAt !== undefined &&
			told.resetAt > this.named + WHOLE_SECOND_MS / 2;
		if (test === 'rounding') this.rounding = fresh ? 'up' : 'down';
		else this.whole = fresh ? 'yes' : 'no';
	}

	/** A probe refused in the window read as ended: the reset is not rounded up after all (an answer's
	 * seconds to wait count from when it left the server, not from when it came). */
	refusedInEnded(told: RateLimitHeaders): void {
		if (
			this.rounding === 'up' &&
			told.resetCoarse &&
			this.ended !== undefined &&
			!this.namesLaterThanEnded(told)
		)
			this.rounding = 'down';
	}

	/** When a 429 says the window is spent: its reset read as `take` would, else its Retry-After. */
	exhaustedUntil(told: RateLimitHeaders): number | undefined {
		// An exact reset says more than a Retry-After in whole seconds.
		if (told.resetAt !== undefined && !told.resetCoarse) return told.resetAt + RESET_MARGIN_MS;
		if (told.retryAt !== undefined) return told.retryAt;
		if (told.resetAt === undefined) return undefined;
		return told.resetAt + (this.rounding === 'up' ? RESET_MARGIN_MS : WHOLE_SECOND_MS);
	}

	/** Whether an answer names a later reset than the current window's: the server has moved on. */
	namesLater(told: RateLimitHeaders): boolean {
		return this.later(told, this.named);
	}

	/** Whether an answer names a later reset than the window that ended: it was counted in this one. */
	namesLaterThanEnded(told: RateLimitHeaders): boolean {
		return this.later(told, this.ended);
	}

	private later(told: RateLimitHeaders, than: number | undefined): boolean {
		if (told.resetAt === undefined || than === undefined) return false;
		const same = told.resetFixed && !this.coarse ? SAME_RESET_EXACT_MS : SAME_RESET_COARSE_MS;
		return told.resetAt > than + same;
	}
}
