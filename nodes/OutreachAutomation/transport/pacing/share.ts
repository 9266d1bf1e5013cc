/**
 * How much of one key's window this process may take when others draw on the same key: it cannot see
 * them, only the `remaining` of its own answers. Every request counted by the server lowers `remaining`
 * by one, so from the window's limit down to the lowest `remaining` this process was told in it, every
 * step not taken by one of its own answered requests was taken by someone else (a 429 it did not expect
 * says the server had none left).
 *
 * From that it keeps `sharers`: how many processes like itself the key's traffic amounts to
 * ((others + own) / own, measured over the last whole window, once all its requests were answered; at
 * least 2 once anyone else showed, and not counting what others spent before this process joined).
 * Each process then keeps at most remaining / (2 x sharers - 1) of its own requests in flight (each sees
 * the others' requests one answer late; with that margin, all together never send more than is left),
 * and as `remaining` falls they slow down together instead of overrunning the window at its end. A
 * process alone measures 1 and spends its window at once.
 *
 * Until one whole window has shown it alone (and again after a 429 it did not expect), a process grows
 * its requests in flight as TCP's slow start does: a sixteenth of the window, then one more per answer,
 * so processes started together find each other before any of them bursts. A 429 halves that growth
 * (multiplicative decrease).
 *
 * Others silent for a while in a window (othersQuiet) have finished: the rest of it is this process's.
 */
import { now as currentTime, random } from './clock';

/** A measurement from fewer own answers than this says too little to change the estimate. */
const MIN_OWN_ANSWERS = 2;
/**
 * From this many own answers in a window on, the window's own estimate replaces the last window's: with
 * fewer, the fall between them is mostly others' requests counted in bursts, and says little.
 */
const SETTLED_ANSWERS = 4;
/** Below this, alone: the sure estimate is 1 whenever its own requests explain the fall. */
const ALONE = 1.01;
/** Slow start: at least this many own requests in flight while cautious. */
const INITIAL_CWND = 2;
/**
 * More sharers than this are not told apart. Past about a window's limit, each process gets less than
 * one request a window, and the lot (below) already spreads the last of each window.
 */
const MAX_SHARERS = 64;
/**
 * Up to this many sharers, each takes one of the last requests of a window even when fewer are left:
 * at most this many less one meet a 429, and no slot is left unused at the end of a run. More sharers
 * draw lots for them (see LOT_MARGIN), so that about as many go as are left.
 */
const ONE_EACH_UP_TO = 4;
/**
 * ... and only while those 429s (up to one less than the sharers, every window) stay within this share
 * of the window's limit; on a smaller limit lots leave a slot unused now and then instead.
 */
const ONE_EACH_MAX_429_SHARE = 0.05;
/**
 * Each process's `left` is its last answer's, and the others have sent since, all drawing at once: a lot
 * is won with a third of the chance that figure gives, which leaves a few of the last slots unused rather
 * than meet 429s.
 */
const LOT_MARGIN = 3;
/** How much more than the measured others a process leaves them room for. */
const SAFETY = 2;
/**
 * Slow start: the first requests of a cautious window, as a fraction of what is left (processes
 * started together each take this much before they have seen one another).
 */
const INITIAL_FRACTION = 1 / 16;
/** Others are taken to have finished after this many own answers and pacing gaps without a step of theirs. */
const QUIET_ANSWERS = 3;
const QUIET_GAPS = 3;
/** ... and at least this long (a busy process's pause; a whole-second reset's uncertainty). */
const QUIET_MS = 1200;

/**
 * One window as this process's answers showed it: the highest and the lowest `remaining` it was told,
 * and which of its own requests (by order of sending) were told them. The server counts requests in
 * about the order they are sent, so the own requests sent between those two are the own part of the
 * fall between them, answered or not; the rest of the fall is others'. Once the window's limit is
 * known, the fall is counted from the limit itself: what others spent before this process's first
 * answer (a window someone else opened, or spent) shows too.
 */
class Tally {
	private highest: { remaining: number; seq: number } | undefined;
	private lowest: { remaining: number; seq: number; sentWith?: number } | undefined;
	/** The first own request answered in this window. */
	private firstSeq = Infinity;
	answers = 0;
	/** Own requests of earlier windows the server counted (or may have counted) in this one. */
	carried = 0;
	/** Whether those still unanswered at this window's first answer were added to `carried`. */
	carriedAll = false;
	/** The limit as known at the window's first answer (a server may change it between windows). */
	private limit = 0;
	/**
	 * This process joined the window after others had spent part of it: what they spent before says
	 * how much is left, not how many will share the next window (they may have finished). Measured
	 * at the window's end, the fall counts from this process's first answer; while the window lasts,
	 * from the limit (processes started together find each other sooner).
	 */
	joined = false;

	/** The newest own answer (by order of sending), when the first came, and when others last showed. */
	private newest: { remaining: number; seq: number } | undefined;
	startedAt: number | undefined;
	othersAt: number | undefined;
	/** Own answers since others last showed (or since the first). */
	quietAnswers = 0;

	/**
	 * Adds an own answer; returns whether it showed others' requests since the one before. `sentWith`:
	 * the last own request sent at once with it (the server may have counted those before it).
	 */
	add(remaining: number, seq: number, limit: number, now: number, sentWith = seq): boolean {
		if (this.answers === 0) {
			this.limit = limit;
			this.startedAt = now;
		}
		// Others showed if the fall since the newest own answer is more than own requests explain
		// (for the first answer: since the window's limit).
		const before = this.newest ?? { remaining: this.limit - this.carried, seq: seq - 1 };
		let others = false;
		if (seq > before.seq) {
			if (before.remaining - remaining - (seq - before.seq - 1) > 1) {
				this.othersAt = now;
				this.quietAnswers = 0;
				others = true;
			} else this.quietAnswers++;
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
	 * (All requests counted) / (own requests counted), from the window's limit (or, while that is not
	 * known, from the highest `remaining`) down to the lowest, given `inFlight` own requests still
	 * unanswered (some of them may be counted already). `sure`: 1 while the fall can be explained by
	 * own requests alone (else the best guess, for a process still finding out); undefined until there
	 * is a fall. `measuring`: for the next window, at this one's end (see `joined`).
	 */
	sharers(inFlight: number, sure = true, tolerated = 1, measuring = false): number | undefined {
		if (!this.highest || !this.lowest) return undefined;
		const fromLimit = !(this.joined && measuring) && this.limit > this.highest.remaining;
		const top = fromLimit ? this.limit : this.highest.remaining;
		const all = top - this.lowest.remaining - this.carried;
		if (all <= 0) return undefined;
		// From the limit every answered own request is part of the fall; from the highest answer, all
		// but that one.
		const answered = fromLimit ? this.answers : this.answers - 1;
		// Every answered request was counted by the lowest one at the latest; of those in flight, the
		// ones sent before it, or at once with it, may have been too. Not those sent later: with many
		// in flight, counting them all would hide as many of others' requests.
		const last = this.lowest.sentWith ?? this.lowest.seq;
		const bySeq = fromLimit
			? last - Math.min(this.firstSeq, this.lowest.seq) + 1
			: last - this.highest.seq;
		const own = Math.max(answered, Math.min(bySeq, answered + inFlight));
		// One unexplained step is tolerated (a request of the window before, counted late); once all
		// are answered the count is exact.
		if (sure && all - own <= tolerated) return 1;
		return Math.max(1, all / Math.max(1, own));
	}
}

export class Share {
	/** Processes like this one the key's traffic amounts to; 1 means alone. */
	sharers = 1;
	/** Until a whole window has shown this process alone, requests grow by slow start. */
	cautious = true;
	cwnd = INITIAL_CWND;
	/** The window's limit as far as this process knows it (0: not known). */
	limit = 0;
	private tally = new Tally();
	/** The window that just ended, while answers to its requests are still coming. */
	private closing: Tally | undefined;
	/** This process's lot for the last requests of the window, drawn anew after each own answer. */
	private lot: boolean | undefined;
	/**
	 * Sharers as measured from windows with enough own answers only (not raised by a single answer):
	 * whether the last requests go by lot. A noisy one-answer window must not switch it on for a few
	 * processes, where an unused slot costs a whole window.
	 */
	private measured = 1;

	/** A new window begins; the one that ended is measured once its last answer is in. */
	newWindow(ownUnanswered: number): void {
		this.lot = undefined;
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
		const sharers = tally.sharers(0, true, 0, true);
		if (sharers === undefined) return;
		if (tally.answers < MIN_OWN_ANSWERS) {
			// Too few own answers to measure; enough to raise the estimate (many others on the key leave
			// each process one or two requests a window). One that shows no one else halves it: a high
			// estimate allows one request a window, and one answer a window could never lower it.
			if (tally.answers > 0 && sharers > this.sharers)
				this.sharers = Math.min(sharers, 2 * this.sharers, MAX_SHARERS);
			else if (tally.answers > 0 && sharers < ALONE) this.sharers = Math.max(1, this.sharers / 2);
			return;
		}
		// Anyone else seen counts as one process like this one at least: the ratio alone holds any split
		// it started with (a process that took 97 of 100 measures 1.03 and keeps 97; the one that got 3
		// measures 33 and keeps 3). Bounded: a process that got little of a window must get some of the next.
		this.sharers = Math.min(sharers < ALONE ? sharers : Math.max(2, sharers), MAX_SHARERS);
		this.measured = this.sharers;
		// Alone only if the window showed no one else at all: one joined after others spent most of it
		// measures alone from its first answer on, and those others may still be there.
		if (sharers < ALONE && (tally.sharers(0, true, 0) ?? 1) < ALONE) this.cautious = false;
		else if (!this.cautious) {
			this.cautious = true;
			this.cwnd = INITIAL_CWND;
		}
	}

	/**
	 * This window's first answer came: own requests of earlier windows still unanswered may be counted
	 * in it (those sent just before its start most likely are). Their answers will tell (see below).
	 */
	carry(stragglers: number): void {
		this.tally.carried += stragglers;
		this.tally.carriedAll = true;
	}

	/**
	 * An answer to own request `seq` of an earlier window (`ofEndedWindow`: the one that just ended),
	 * and which window the server counted it in. One counted here is part of this window's fall that
	 * is not others': counted before this window's first answer, it was not carried yet; one counted
	 * in the ended window was carried for nothing.
	 */
	stragglerAnswered(
		remaining: number,
		seq: number,
		counted: 'here' | 'ended',
		ofEndedWindow: boolean,
		now = currentTime(),
	): void {
		const tally = this.tally;
		if (counted === 'here') {
			if (!tally.carriedAll) tally.carried++;
			return;
		}
		if (tally.carriedAll) tally.carried = Math.max(0, tally.carried - 1);
		if (ofEndedWindow) this.closing?.add(remaining, seq, this.limit, now);
	}

	/**
	 * The probe of a window was answered: a cautious process starts with a part of what is left.
	 * `joined`: see Tally.joined.
	 */
	started(left: number, joined = false): void {
		if (joined) this.tally.joined = true;
		if (this.cautious) this.cwnd = Math.max(this.cwnd, Math.ceil(left * INITIAL_FRACTION));
	}

	/** An answer to own request number `seq`, with the `remaining` it was told, of this window or the one that ended. */
	answered(remaining: number, seq: number, now = currentTime(), sentWith = seq): void {
		const others = this.tally.add(remaining, seq, this.limit, now, sentWith);
		this.lot = undefined;
		// Slow start grows only while the answers show no one else: processes started together would
		// otherwise each grow to most of the window before the first 429 tells them of each other.
		if (this.cautious && !others) this.cwnd++;
	}

	/** Whether this process takes one of the last requests of the window (see ONE_EACH_UP_TO). */
	private drawLot(left: number, sharers: number): boolean {
		// Measured over whole windows: a live estimate swings too far within one to decide this.
		const affordable = this.limit ? 1 + this.limit * ONE_EACH_MAX_429_SHARE : ONE_EACH_UP_TO;
		if (this.measured <= Math.min(ONE_EACH_UP_TO, affordable)) return true;
		this.lot ??= random() < left / (LOT_MARGIN * sharers);
		return this.lot;
	}

	/** A 429 to a probe, the first request of a window: someone else is on the key for certain. */
	crowded(): void {
		this.sharers = Math.max(this.sharers, 2);
		this.overrun();
	}

	/** A 429 to own request `seq`: the server had nothing left of the window. */
	spent(seq: number): void {
		this.tally.spent(seq);
	}

	/** A 429 to own request `seq` although the window seemed to have room: someone else took it. */
	overrun(seq?: number): void {
		if (seq !== undefined) this.tally.spent(seq);
		this.cautious = true;
		this.cwnd = Math.max(INITIAL_CWND, Math.floor(this.cwnd / 2));
	}

	/**
	 * The sharers to pace by now: the last window's, or more if this one already shows more; once this
	 * window has SETTLED_ANSWERS own answers, what it shows.
	 */
	current(inFlight = 0): number {
		// With nothing in flight the sure figure is exact; while finding out, the best guess.
		const live = this.tally.sharers(inFlight, !this.cautious || inFlight === 0) ?? 1;
		// Once this window has shown enough, it speaks for itself: others that finished (or slowed) since
		// the last window no longer hold this process to their share. Anyone seen then still counts as
		// one process like this one at least (as in `measure`).
		if (this.tally.answers >= SETTLED_ANSWERS)
			return Math.min(MAX_SHARERS, Math.max(live, Math.min(this.sharers, 2)));
		return Math.min(MAX_SHARERS, Math.max(this.sharers, live));
	}

	/** Whether nothing shows anyone else on the key. */
	alone(inFlight = 0): boolean {
		return Math.max(this.sharers, this.tally.sharers(inFlight) ?? 1) < ALONE;
	}

	/**
	 * Whether the others on the key have gone quiet in this window: several own answers, more than a few
	 * of `gapMs` (the pace this process keeps while sharing) and at least QUIET_MS without a step of
	 * theirs. Shorter silences are not an end: a busy n8n pauses for a moment, and others not yet seen in
	 * the window may only be waiting for a whole-second reset.
	 */
	othersQuiet(now: number, gapMs: number): boolean {
		const tally = this.tally;
		if (tally.startedAt === undefined || tally.quietAnswers < QUIET_ANSWERS) return false;
		const since = tally.othersAt ?? tally.startedAt;
		return now - since >= Math.max(QUIET_MS, QUIET_GAPS * gapMs);
	}

	/**
	 * How many own requests may be in flight, given what is left of the window (own requests in
	 * flight included, as the server will count them): this process's share of it, and while cautious
	 * no more than slow start allows. 0 means: leave the rest of this window to the others.
	 */
	allowance(left: number, inFlight: number, alone = false): number {
		const sharers = alone ? 1 : this.current(inFlight);
		// With others, a margin: each sees the others' requests one answer late.
		let allowed = sharers < ALONE ? left : Math.floor(left / (1 + (sharers - 1) * SAFETY));
		// One each still fits when what is left covers every sharer. When it does not, one each anyway:
		// left unused, the last requests of a window can cost a whole window more at the end of a run,
		// and one too many meets a 429 only (the caller marks it: not taken for an overrun).
		if (allowed === 0 && inFlight === 0 && left >= 1 && this.drawLot(left, sharers)) allowed = 1;
		if (this.cautious) allowed = Math.min(allowed, this.cwnd);
		return allowed;
	}
}
