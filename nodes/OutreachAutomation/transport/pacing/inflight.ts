/**
 * This process's own requests of one key sent and not answered, in the order sent, with how many each
 * window sent; how long answers take, and so when an unanswered request counts as hung or an answer
 * as late.
 */

/**
 * A request unanswered for ten answer times, within 1 s (a busy process's pause) and 3 s (what one
 * hung request may cost the others), counts as spent; never before two answer times (a probe given up
 * too soon sends a second into the same window). Before the key's first answer nothing says how long
 * answers take: the first request is given up after 4.5 s, so that one hung request holds the others
 * less than 5 s while a service answering within 4 s sees it alone; any after it only after 30 s
 * (longer than a working service takes, a tenth of a request's timeout), so that a slow service sees
 * at most two requests before it answers. Looks are rounded to a step.
 */
const HUNG_ANSWERS = 10;
const HUNG_SLOW_ANSWERS = 2;
const HUNG_MIN_MS = 1000;
const HUNG_MAX_MS = 3000;
const HUNG_FIRST_MS = 4500;
const HUNG_UNANSWERED_MS = 30_000;
const HUNG_LOOK_STEP_MS = 250;
/** An answer this late tells of the window long ago: others may have spent it since. */
const STALE_ANSWERS = 4;
const STALE_MIN_MS = 250;

interface Sent {
	epoch: number;
	sentAt: number;
}

export class InFlight {
	private readonly sent = new Map<number, Sent>();
	private readonly byEpoch = new Map<number, number>();
	private seq = 0;
	/** The requests being sent at once (see Slot.burst). */
	private burst: { last: number } | undefined;
	/** How long an answer takes (smoothed). */
	answerMs: number | undefined;
	/** Whether the key's first request was given up as hung before any answer. */
	private firstGivenUp = false;

	/** Own requests in flight: any may be counted after an answer just read, so told less these is sure. */
	get size(): number {
		return this.sent.size;
	}

	lastSeq(): number {
		return this.seq;
	}

	/** Sent in window `epoch`. */
	of(epoch: number): number {
		return this.byEpoch.get(epoch) ?? 0;
	}

	/** Sent in windows before `epoch`: the server may count them in it. */
	before(epoch: number): number {
		let count = 0;
		for (const [sentIn, n] of this.byEpoch) if (sentIn < epoch) count += n;
		return count;
	}

	/** Sent after request `seq` (counted from the oldest: few are older). */
	sentAfter(seq: number): number {
		let older = 0;
		for (const each of this.sent.keys()) {
			if (each >= seq) break;
			older++;
		}
		return this.sent.size - older - (this.sent.has(seq) ? 1 : 0);
	}

	/** Whether an answer come now to a request sent at `sentAt` took far longer than answers take. */
	stale(sentAt: number | undefined, now: number): boolean {
		if (this.answerMs === undefined || sentAt === undefined) return false;
		return now - sentAt > Math.max(STALE_MIN_MS, STALE_ANSWERS * this.answerMs);
	}

	/** How long a request may go unanswered before it stops holding the others (but see firstHungAt). */
	hungAfterMs(): number {
		if (this.answerMs === undefined) return HUNG_UNANSWERED_MS;
		const usual = Math.min(HUNG_MAX_MS, Math.max(HUNG_MIN_MS, HUNG_ANSWERS * this.answerMs));
		return Math.max(usual, HUNG_SLOW_ANSWERS * this.answerMs);
	}

	/** When to look whether the oldest request in flight is hung (undefined: none in flight). */
	hungAt(): number | undefined {
		for (const sent of this.sent.values()) return this.step(sent.sentAt + this.hungAfterMs());
		return undefined;
	}

	/** Before any answer, when to look whether the key's first request is hung (undefined: it is
	 * answered, given up or not sent). A look of its own: once answered, its look is not wanted. */
	firstHungAt(): number | undefined {
		if (this.answerMs !== undefined || this.firstGivenUp) return undefined;
		for (const sent of this.sent.values()) return this.step(sent.sentAt + HUNG_FIRST_MS);
		return undefined;
	}

	private step(at: number): number {
		return Math.ceil(at / HUNG_LOOK_STEP_MS) * HUNG_LOOK_STEP_MS;
	}

	/** The requests unanswered too long, oldest first, each passed to `expired` as it is forgotten. */
	expireHung(now: number, expired: (seq: number) => void): void {
		for (const [seq, sent] of this.sent) {
			const first = this.answerMs === undefined && !this.firstGivenUp;
			if (now - sent.sentAt < (first ? HUNG_FIRST_MS : this.hungAfterMs())) break;
			if (first) this.firstGivenUp = true;
			this.remove(seq);
			expired(seq);
		}
	}

	/** A request sent in window `epoch`: its number, and the requests sent at once with it. */
	add(epoch: number, now: number): { seq: number; burst: { last: number } } {
		this.burst ??= { last: 0 };
		const seq = ++this.seq;
		this.burst.last = seq;
		this.sent.set(seq, { epoch, sentAt: now });
		this.byEpoch.set(epoch, this.of(epoch) + 1);
		return { seq, burst: this.burst };
	}

	/** The next request sent begins another burst (see Slot.burst). */
	endBurst(): void {
		this.burst = undefined;
	}

	remove(seq: number): void {
		const sent = this.sent.get(seq);
		if (!sent) return;
		this.sent.delete(seq);
		const left = (this.byEpoch.get(sent.epoch) ?? 1) - 1;
		if (left > 0) this.byEpoch.set(sent.epoch, left);
		else this.byEpoch.delete(sent.epoch);
	}

	/** An answer took `ms`. */
	timed(ms: number): void {
		this.answerMs = this.answerMs === undefined ? ms : 0.8 * this.answerMs + 0.2 * ms;
	}
}
