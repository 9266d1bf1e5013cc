/**
 * How much of a key's window this process may take when others draw on it. It sees only its own
 * answers' `remaining`: each step of the fall not taken by an own request was someone else's.
 * `sharers`: how many processes like this one the key's traffic amounts to (all / own over the last
 * whole window). Each keeps at most left / (1 + 2 (sharers - 1)) in flight: each sees the others one
 * answer late, and with that margin they slow down together as the window empties. Until a window has
 * shown it alone (and after an unexpected 429), a process grows by slow start, so processes started
 * together find each other before any bursts.
 */
/** Fewer own answers in a window than this measure too little to set the estimate. */
const MIN_OWN_ANSWERS = 2;
/** From this many own answers on, the window's own estimate replaces the last window's. */
const SETTLED_ANSWERS = 4;
/** Below this, alone: own requests explain the whole fall. */
const ALONE = 1.01;
/** Slow start's least number of own requests in flight. */
const INITIAL_CWND = 2;
/** ... and its first step: this part of what the window has left. */
const INITIAL_FRACTION = 1 / 16;
/** Past about one request each per window, more sharers are not told apart. */
const MAX_SHARERS = 64;
/**
 * Up to this many sharers (while their 429s stay within 5% of the limit) each takes one of a window's
 * last requests even when fewer are left: an unused slot can cost a whole window, one too many one 429.
 * More draw lots, won with a third of the chance their figure gives (others sent since it was told).
 */
const ONE_EACH_UP_TO = 4;
const ONE_EACH_MAX_429_SHARE = 0.05;
const LOT_MARGIN = 3;
/** How much more room than measured each process leaves the others. */
const SAFETY = 2;

interface Mark {
	remaining: number;
	seq: number;
}

/**
 * One window as own answers showed it: the highest and lowest `remaining` told, and to which own
 * requests. The server counts in about the order sent, so own requests sent between two answers are
 * the own part of the fall between them; the rest is others'. The fall counts from the limit once
 * known, so what others spent before the first own answer shows too.
 */
class Tally {
	private highest: Mark | undefined;
	private lowest: (Mark & { sentWith?: number }) | undefined;
	private firstSeq = Infinity;
	answers = 0;
	/** Own requests of earlier windows the server counted, or may have counted, in this one. */
	carried = 0;
	/** Whether those unanswered at the first answer were added to `carried`. */
	carriedAll = false;
	/** The limit at the window's first answer (a server may change it between windows). */
	private limit = 0;
	/** Joined after others spent part of the window: measured for the next window, the fall counts
	 * from the first own answer (those others may have finished); while it lasts, from the limit. */
	joined = false;
	private newest: Mark | undefined;

	/** Adds an own answer; whether it showed others since the one before. `sentWith`: the last own
	 * request sent at once with it (the server may have counted those first). */
	add(remaining: number, seq: number, limit: number, sentWith = seq): boolean {
		if (this.answers === 0) this.limit = limit;
		const before = this.newest ?? { remaining: this.limit - this.carried, seq: seq - 1 };
		let others = false;
		if (seq > before.seq) {
			others = before.remaining - remaining - (seq - before.seq - 1) > 1;
			this.newest = { remaining, seq };
		}
		this.answers++;
		this.firstSeq = Math.min(this.firstSeq, seq);
		if (!this.highest || remaining > this.highest.remaining) this.highest = { remaining, seq };
		if (!this.lowest || remaining < this.lowest.remaining)
			this.lowest = { remaining, seq, sentWith: Math.max(seq, sentWith) };
		return others;
	}

	/** A 429 to own request `seq`: the server had none left when it counted it. */
	spent(seq: number): void {
		if (!this.lowest || this.lowest.remaining > 0) this.lowest = { remaining: 0, seq };
		this.highest ??= this.lowest;
	}

	/**
	 * All requests counted over own ones, from the limit (or highest answer) down to the lowest, with
	 * `inFlight` own unanswered; undefined until there is a fall. `sure`: 1 while own requests explain the
	 * fall with `tolerated` to spare (a late-counted request of the window before). `measuring`: see `joined`.
	 */
	sharers(inFlight: number, sure = true, tolerated = 1, measuring = false): number | undefined {
		if (!this.highest || !this.lowest) return undefined;
		const fromLimit = !(this.joined && measuring) && this.limit > this.highest.remaining;
		const top = fromLimit ? this.limit : this.highest.remaining;
		const all = top - this.lowest.remaining - this.carried;
		if (all <= 0) return undefined;
		const answered = fromLimit ? this.answers : this.answers - 1;
		// Own in flight counted by the lowest answer: sent before or with it, never later (that would
		// hide as many of others').
		const last = this.lowest.sentWith ?? this.lowest.seq;
		const bySeq = fromLimit
			? last - Math.min(this.firstSeq, this.lowest.seq) + 1
			: last - this.highest.seq;
		const own = Math.max(answered, Math.min(bySeq, answered + inFlight));
		if (sure && all - own <= tolerated) return 1;
		return Math.max(1, all / Math.max(1, own));
	}
}

/** What the policy may read. */
export type ShareView = Readonly<
	Pick<Share, 'sharers' | 'cautious' | 'cwnd' | 'current' | 'spreadBy' | 'alone' | 'allowance'>
>;

export class Share {
	/** Processes like this one the key's traffic amounts to; 1 means alone. */
	sharers = 1;
	/** Until a whole window has shown this process alone, requests grow by slow start (`cwnd`). */
	cautious = true;
	cwnd = INITIAL_CWND;
	/** The window's limit as far as known (0: not known). */
	limit = 0;
	private tally = new Tally();
	/** The window that ended, while answers to its requests still come. */
	private closing: Tally | undefined;
	/** This process's lot for the last requests of the window, drawn anew after each own answer. */
	private lot: boolean | undefined;
	/** Whether others took room this process counted on (an overrun), in this window and the one before. */
	private overrunHere = false;
	private overrunBefore = false;

	/** A window begins; the one that ended is measured once its last answer is in. */
	newWindow(ownUnanswered: number): void {
		this.lot = undefined;
		this.overrunBefore = this.overrunHere;
		this.overrunHere = false;
		if (this.closing) this.measure(this.closing);
		this.closing = this.tally;
		this.tally = new Tally();
		if (ownUnanswered === 0) this.closeNow();
	}

	/** The window that ended has every request answered: measure it. */
	closeNow(): void {
		if (!this.closing) return;
		this.measure(this.closing);
		this.closing = undefined;
	}

	private measure(tally: Tally): void {
		const sharers = tally.sharers(0, true, 0, true);
		if (sharers === undefined) return;
		if (tally.answers < MIN_OWN_ANSWERS) {
			// Enough to raise the estimate (many others leave each one or two a window); one answer alone
			// halves it, or a high estimate could never come down.
			if (tally.answers > 0 && sharers > this.sharers)
				this.sharers = Math.min(sharers, 2 * this.sharers, MAX_SHARERS);
			else if (tally.answers > 0 && sharers < ALONE) this.sharers = Math.max(1, this.sharers / 2);
			return;
		}
		// Anyone seen counts as a process like this one at least: the ratio alone keeps any split it
		// started with (97 of 100 measures 1.03, its neighbour with 3 measures 33).
		this.sharers = Math.min(sharers < ALONE ? sharers : Math.max(2, sharers), MAX_SHARERS);
		// Alone only if the fall from the limit showed no one either (a late joiner's does).
		if (sharers < ALONE && (tally.sharers(0, true, 0) ?? 1) < ALONE) this.cautious = false;
		else if (!this.cautious) {
			this.cautious = true;
			this.cwnd = INITIAL_CWND;
		}
	}

	/** This window's first answer: own requests of earlier windows still unanswered may count in it. */
	carry(stragglers: number): void {
		this.tally.carried += stragglers;
		this.tally.carriedAll = true;
	}

	/** An answer to own request `seq` of an earlier window (`ofEndedWindow`: the last one), counted
	 * here (part of this fall that is not others') or in the ended window (part of its measure). */
	stragglerAnswered(
		remaining: number,
		seq: number,
		counted: 'here' | 'ended',
		ofEndedWindow: boolean,
	): void {
		const tally = this.tally;
		if (counted === 'here') {
			if (!tally.carriedAll) tally.carried++;
			return;
		}
		if (tally.carriedAll) tally.carried = Math.max(0, tally.carried - 1);
		if (ofEndedWindow) this.closing?.add(remaining, seq, this.limit);
	}

	/** The probe was answered with `left`; `joined`: see Tally.joined. Slow start steps only from a
	 * limit it knows (one guessed from this answer hides everyone who came first), and not after a window
	 * in which others took room it counted on: there it goes on from its halved step. */
	started(left: number, joined = false, limitSeen = true): void {
		if (joined) this.tally.joined = true;
		if (this.cautious && limitSeen && !this.overrunBefore)
			this.cwnd = Math.max(this.cwnd, Math.ceil(left * INITIAL_FRACTION));
	}

	/** An own answer of this window, told `remaining`. Slow start grows only while it shows no one. */
	answered(remaining: number, seq: number, sentWith = seq): void {
		const others = this.tally.add(remaining, seq, this.limit, sentWith);
		this.lot = undefined;
		if (this.cautious && !others) this.cwnd++;
	}

	/** Whether this process takes one of the window's last requests (see ONE_EACH_UP_TO), by the sharers
	 * of earlier windows (this window's live figure swings too far to decide it): true, false, or the
	 * chance of a lot still to be drawn (`drawLot`). */
	private lastOne(left: number, sharers: number): boolean | number {
		const affordable = this.limit ? 1 + this.limit * ONE_EACH_MAX_429_SHARE : ONE_EACH_UP_TO;
		if (this.sharers <= Math.min(ONE_EACH_UP_TO, affordable)) return true;
		return this.lot ?? left / (LOT_MARGIN * sharers);
	}

	/** The lot drawn for the window's last requests (see allowance). */
	drawLot(won: boolean): void {
		this.lot = won;
	}

	/** A 429 to a window's probe: someone else is on the key for certain. */
	crowded(): void {
		this.sharers = Math.max(this.sharers, 2);
		this.overrun();
	}

	/** A 429 to own request `seq`: the server had nothing left. */
	spent(seq: number): void {
		this.tally.spent(seq);
	}

	/** A 429 although the window seemed to have room: someone took it. Slow start halves. */
	overrun(seq?: number): void {
		if (seq !== undefined) this.tally.spent(seq);
		this.overrunHere = true;
		this.cautious = true;
		this.cwnd = Math.max(INITIAL_CWND, Math.floor(this.cwnd / 2));
	}

	/** The sharers to pace by: the last window's or this one's if more; once settled, this one's. */
	current(inFlight = 0): number {
		const live = this.tally.sharers(inFlight, !this.cautious || inFlight === 0) ?? 1;
		if (this.tally.answers >= SETTLED_ANSWERS)
			return Math.min(MAX_SHARERS, Math.max(live, Math.min(this.sharers, 2)));
		return Math.min(MAX_SHARERS, Math.max(this.sharers, live));
	}

	/**
	 * The sharers a share is spread over the window by: in a window this process joined, once its own
	 * answers show a fall since its first, by that fall. What others spent before it came is their
	 * past, not a pace they keep; spread by it, a few requests could wait for the window's end.
	 */
	spreadBy(sharers: number, inFlight: number): number {
		if (!this.tally.joined) return sharers;
		const since = this.tally.sharers(inFlight, !this.cautious || inFlight === 0, 1, true);
		return since === undefined ? sharers : Math.min(sharers, Math.max(this.sharers, since));
	}

	/** Whether nothing shows anyone else on the key. */
	alone(inFlight = 0): boolean {
		return Math.max(this.sharers, this.tally.sharers(inFlight) ?? 1) < ALONE;
	}

	/** Own requests that may be in flight, given `left` (own in flight included): the share, capped by
	 * slow start while cautious. 0: the rest of this window is the others'. `{ draw }`: the lot for the
	 * window's last requests must be drawn first, with this chance (`drawLot`), then asked again. */
	allowance(left: number, inFlight: number, alone = false): number | { draw: number } {
		const sharers = alone ? 1 : this.current(inFlight);
		let allowed = sharers < ALONE ? left : Math.floor(left / (1 + (sharers - 1) * SAFETY));
		if (allowed === 0 && inFlight === 0 && left >= 1) {
			const lastOne = this.lastOne(left, sharers);
			if (typeof lastOne === 'number') return { draw: lastOne };
			if (lastOne) allowed = 1;
		}
		return this.cautious ? Math.min(allowed, this.cwnd) : allowed;
	}
}
