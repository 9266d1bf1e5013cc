/**
 * How much of one key's window this process may take when others draw on the same key: it cannot see
 * them, only the `remaining` of its own answers. Every request counted by the server lowers `remaining`
 * by one, so between the highest and the lowest `remaining` this process was told in one window, every
 * step not taken by one of its own answered requests was taken by someone else.
 *
 * From that it keeps `sharers`: how many processes like itself the key's traffic amounts to
 * ((others + own) / own, measured over the last whole window, once all its requests were answered).
 * Each process then keeps at most remaining / (2 x sharers - 1) of its own requests in flight (each sees
 * the others' requests one answer late; with that margin, all together never send more than is left),
 * and as `remaining` falls they slow down together instead of overrunning the window at its end. A
 * process alone measures 1 and spends its window at once.
 *
 * Until one whole window has shown it alone (and again after a 429 it did not expect), a process grows
 * its requests in flight as TCP's slow start does: a sixteenth of the window, then one more per answer,
 * so processes started together find each other before any of them bursts. A 429 halves that growth
 * (multiplicative decrease).
 */

/** A measurement from fewer own answers than this says too little to change the estimate. */
const MIN_OWN_ANSWERS = 2;
/** Below this, alone: the sure estimate is 1 whenever its own requests explain the fall. */
const ALONE = 1.01;
/** Slow start: at least this many own requests in flight while cautious. */
const INITIAL_CWND = 2;
/** More sharers than this are not told apart: a process always keeps some of a window. */
const MAX_SHARERS = 8;
/** How much more than the measured others a process leaves them room for. */
const SAFETY = 2;
/** Slow start: the first requests of a cautious window, as a fraction of what is left. */
const INITIAL_FRACTION = 1 / 16;

/**
 * One window as this process's answers showed it: the highest and the lowest `remaining` it was told,
 * and which of its own requests (by order of sending) were told them. The server counts requests in
 * about the order they are sent, so the own requests sent between those two are the own part of the
 * fall between them, answered or not; the rest of the fall is others'.
 */
class Tally {
	private highest: { remaining: number; seq: number } | undefined;
	private lowest: { remaining: number; seq: number } | undefined;
	answers = 0;
	/** Own requests of the window before, unanswered when this one began: the server may count them here. */
	carried = 0;

	add(remaining: number, seq: number): void {
		this.answers++;
		if (!this.highest || remaining > this.highest.remaining) this.highest = { remaining, seq };
		if (!this.lowest || remaining < this.lowest.remaining) this.lowest = { remaining, seq };
	}

	/**
	 * (All requests counted) / (own requests counted) between the two, given `inFlight` own requests
	 * still unanswered (some of them may be counted already). `sure`: 1 while the fall can be explained
	 * by own requests alone (else the best guess, for a process still finding out); undefined until
	 * there is a fall.
	 */
	sharers(inFlight: number, sure = true, tolerated = 1): number | undefined {
		if (!this.highest || !this.lowest) return undefined;
		const all = this.highest.remaining - this.lowest.remaining - this.carried;
		if (all <= 0) return undefined;
		const answered = this.answers - 1;
		// While requests are in flight, one unexplained step is tolerated (a request of the window
		// before, counted late); once all are answered the count is exact.
		if (sure && all - answered - inFlight <= tolerated) return 1;
		// Every answered request was counted by the lowest one at the latest; of those in flight,
		// the ones sent before it most likely were too.
		const bySeq = this.lowest.seq - this.highest.seq;
		const own = Math.max(1, answered, Math.min(bySeq, answered + inFlight));
		return Math.max(1, all / own);
	}
}

export class Share {
	/** Processes like this one the key's traffic amounts to; 1 means alone. */
	sharers = 1;
	/** Until a whole window has shown this process alone, requests grow by slow start. */
	cautious = true;
	cwnd = INITIAL_CWND;
	private tally = new Tally();
	/** The window that just ended, while answers to its requests are still coming. */
	private closing: Tally | undefined;

	/** A new window begins; the one that ended is measured once its last answer is in. */
	newWindow(ownUnanswered: number): void {
		if (this.closing) this.measure(this.closing);
		this.closing = this.tally;
		this.tally = new Tally();
		if (ownUnanswered === 0) this.closeNow();
	}

	/** The window that ended has no request left unanswered: measure it. */
	closeNow(): void {
		if (!this.closing) return;
		this.measure(this.closing);
		this.closing = undefined;
	}

	private measure(tally: Tally): void {
		const sharers = tally.sharers(0, true, 0);
		if (sharers === undefined || tally.answers < MIN_OWN_ANSWERS) return;
		// Bounded: a process that got little of a window must still get some of the next.
		this.sharers = Math.min(sharers, MAX_SHARERS);
		if (sharers < ALONE) this.cautious = false;
		else if (!this.cautious) {
			this.cautious = true;
			this.cwnd = INITIAL_CWND;
		}
	}

	/** Own requests of the window before still unanswered when this one's probe was answered. */
	carry(stragglers: number): void {
		this.tally.carried = stragglers;
	}

	/** The probe of a window was answered: a cautious process starts with a part of what is left. */
	started(left: number): void {
		if (this.cautious) this.cwnd = Math.max(this.cwnd, Math.ceil(left * INITIAL_FRACTION));
	}

	/** An answer to own request number `seq`, with the `remaining` it was told, of this window or the one that ended. */
	answered(remaining: number, seq: number, ofEndedWindow = false): void {
		if (ofEndedWindow) {
			this.closing?.add(remaining, seq);
			return;
		}
		this.tally.add(remaining, seq);
		if (this.cautious) this.cwnd++;
	}

	/** A 429 to a probe, the first request of a window: someone else is on the key for certain. */
	crowded(): void {
		this.sharers = Math.max(this.sharers, 2);
		this.overrun();
	}

	/** A 429 although the window seemed to have room: someone else took it. */
	overrun(): void {
		this.cautious = true;
		this.cwnd = Math.max(INITIAL_CWND, Math.floor(this.cwnd / 2));
	}

	/** The sharers to pace by now: the last window's, or more if this one already shows more. */
	current(inFlight = 0): number {
		// With nothing in flight the sure figure is exact; while finding out, the best guess.
		const live = this.tally.sharers(inFlight, !this.cautious || inFlight === 0) ?? 1;
		return Math.min(MAX_SHARERS, Math.max(this.sharers, live));
	}

	/** Whether nothing shows anyone else on the key. */
	alone(inFlight = 0): boolean {
		return Math.max(this.sharers, this.tally.sharers(inFlight) ?? 1) < ALONE;
	}

	/**
	 * How many own requests may be in flight, given what is left of the window (own requests in
	 * flight included, as the server will count them): this process's share of it, and while cautious
	 * no more than slow start allows. 0 means: leave the rest of this window to the others.
	 */
	allowance(left: number, inFlight: number): number {
		const sharers = this.current(inFlight);
		// With others, a margin: each sees the others' requests one answer late.
		let allowed = sharers < ALONE ? left : Math.floor(left / (1 + (sharers - 1) * SAFETY));
		// One each still fits when what is left covers every sharer.
		if (allowed === 0 && inFlight === 0 && left >= Math.ceil(sharers)) allowed = 1;
		if (this.cautious) allowed = Math.min(allowed, this.cwnd);
		return allowed;
	}
}
