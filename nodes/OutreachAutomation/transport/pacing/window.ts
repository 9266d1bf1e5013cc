/**
 * What this process knows of one key's window: what the server last said, its own requests in flight,
 * and what it inferred: others on the key (Share), a headerless limit (Span), the reset's rounding (Reset).
 */
import { now as currentTime, random } from '../clock';
import type { RateLimitHeaders } from './headers';
import { Reset, type Test } from './reset';
import { Share } from './share';
import { Span } from './span';

export interface Slot {
	probe: boolean;
	epoch: number;
	/** Order of sending. */
	seq: number;
	/** A probe that tests how to read whole-second resets (reset.ts). */
	coarseTest?: Test;
	/** One of the last few of a shared window: a 429 to it says the window is spent, not overrun. */
	last?: boolean;
	/** Instead of a slot: the reset is further away than we may wait. */
	tooLongUntil?: number;
	/** When it was handed out: its answer tells how long requests take. */
	sentAt?: number;
	/** The requests sent at once with it (by the last one's number): its answer may count them all. */
	burst?: { last: number };
}

/** A shared window's spread ends this long before its earliest end, so its last requests land in it
 * (at most 2 s: a timeout must not take the spread). */
const SPREAD_MARGIN_MS = 250;
const SPREAD_MARGIN_ANSWERS = 4;
const SPREAD_MARGIN_MAX_MS = 2000;
/** A request unanswered for ten answer times, within 1 s (a busy process's pause) and 3 s (what one
 * hung request may cost the others), counts as spent; never before two answer times (a probe given up
 * too soon sends a second into the same window). */
const HUNG_ANSWERS = 10;
const HUNG_SLOW_ANSWERS = 2;
const HUNG_MIN_MS = 1000;
const HUNG_MAX_MS = 3000;
const HUNG_LOOK_STEP_MS = 250;

/** An answer this late tells of the window long ago: others may have spent it since. */
const STALE_ANSWERS = 4;
const STALE_MIN_MS = 250;

/** A probe refused because others spent the window first: more probe than it holds. The next waits a
 * random number of windows from a range doubled after each such refusal, halved after a probe that
 * found half the window. */
const MAX_CROWDING = 5;
const MAX_SKIP_MS = 120_000;

interface Sent {
	epoch: number;
	sentAt: number;
}

export class Window {
	/** What this process may still send in the window: the server's figure less its own since. */
	remaining: number | undefined;
	/** The lowest `remaining` told in this window (own requests in flight not subtracted). */
	toldLow: number | undefined;
	/** When the window is over: the named reset, read as the server rounds it (`reset`). */
	resetAt: number | undefined;
	readonly reset = new Reset();
	/** `X-RateLimit-Limit`, else the most `remaining` + 1 told in this window and the one before (a
	 * lowered limit is followed a window later). A probe told one less opened its window. */
	limit = 0;
	private mostSeen = 0;
	private mostSeenBefore = 0;
	/** With others on the key: when this process may send its next request. */
	nextSendAt = 0;
	/** The probe in flight: the others wait for what it is told. */
	probing: number | undefined;
	/** The next probe not before (see MAX_CROWDING). */
	probeAfter = 0;
	private crowding = 0;
	/** The longest window seen, from a probe's sending to the reset it was told. */
	private lengthMs = 0;
	/** Counts windows seen; a slot remembers the one it was sent in. */
	epoch = 0;
	/** Requests sent and not answered, in the order sent; how many of them each window sent. */
	private readonly inFlight = new Map<number, Sent>();
	private readonly inFlightByEpoch = new Map<number, number>();
	private seq = 0;
	/** The requests being sent at once (see Slot.burst). */
	private burst: { last: number } | undefined;
	readonly share = new Share();
	/** The server sends no rate-limit headers: requests are paced by `span`. */
	unpaced = false;
	readonly span = new Span();
	lastUsed = 0;
	/** How long an answer takes (smoothed). */
	answerMs: number | undefined;
	/** After an answer too late to tell what is left (STALE_ANSWERS), the last request sent then. */
	refreshFrom: number | undefined;

	/** Nothing of this process in flight (queued requests are the queue's to tell). */
	get quiet(): boolean {
		return this.inFlight.size === 0 && this.probing === undefined;
	}

	lastSeq(): number {
		return this.seq;
	}

	/** Whether `slot`'s answer, come now, took far longer than answers take (see STALE_ANSWERS). */
	stale(slot: Slot, now: number): boolean {
		if (this.answerMs === undefined || slot.sentAt === undefined) return false;
		return now - slot.sentAt > Math.max(STALE_MIN_MS, STALE_ANSWERS * this.answerMs);
	}

	inFlightNow(): number {
		return this.inFlightOf(this.epoch);
	}

	inFlightOf(epoch: number): number {
		return this.inFlightByEpoch.get(epoch) ?? 0;
	}

	/** Requests of earlier windows unanswered: the server may count them in this one. */
	stragglers(): number {
		let count = 0;
		for (const [epoch, n] of this.inFlightByEpoch) if (epoch < this.epoch) count += n;
		return count;
	}

	/** Own requests in flight: any may be counted after an answer just read, so told less these is sure. */
	unanswered(): number {
		return this.inFlight.size;
	}

	/** Own requests unanswered that were sent after `slot` (counted from the oldest: few are older). */
	sentAfter(slot: Slot): number {
		let older = 0;
		for (const seq of this.inFlight.keys()) {
			if (seq >= slot.seq) break;
			older++;
		}
		return this.inFlight.size - older - (this.inFlight.has(slot.seq) ? 1 : 0);
	}

	/** How long a request may go unanswered before it stops holding the others. */
	hungAfterMs(): number {
		if (this.answerMs === undefined) return HUNG_MAX_MS;
		const usual = Math.min(HUNG_MAX_MS, Math.max(HUNG_MIN_MS, HUNG_ANSWERS * this.answerMs));
		return Math.max(usual, HUNG_SLOW_ANSWERS * this.answerMs);
	}

	/** When to look whether the oldest request in flight is hung (undefined: none in flight). */
	hungAt(): number | undefined {
		for (const sent of this.inFlight.values())
			return Math.ceil((sent.sentAt + this.hungAfterMs()) / HUNG_LOOK_STEP_MS) * HUNG_LOOK_STEP_MS;
		return undefined;
	}

	/** Gives up on requests unanswered too long: spent, in this window only (a hung service's would hold
	 * every window after); their answers, if they come, are still read. */
	expireHung(now: number): void {
		const after = this.hungAfterMs();
		for (const [seq, sent] of this.inFlight) {
			if (now - sent.sentAt < after) break;
			this.forget(seq);
			if (this.probing === seq) this.probing = undefined;
		}
	}

	private forget(seq: number): void {
		// However the request sent after a late answer ends, the others need not wait for it.
		if (this.refreshFrom !== undefined && seq > this.refreshFrom) this.refreshFrom = undefined;
		const sent = this.inFlight.get(seq);
		if (!sent) return;
		this.inFlight.delete(seq);
		const left = (this.inFlightByEpoch.get(sent.epoch) ?? 1) - 1;
		if (left > 0) this.inFlightByEpoch.set(sent.epoch, left);
		else this.inFlightByEpoch.delete(sent.epoch);
	}

	/** The window ended: its reset passed, or the server started another. */
	roll(): void {
		this.reset.ended = this.reset.named;
		this.mostSeenBefore = this.mostSeen;
		this.mostSeen = 0;
		this.share.newWindow(this.inFlightNow());
		this.remaining = undefined;
		this.toldLow = undefined;
		this.resetAt = undefined;
		this.nextSendAt = 0;
		this.refreshFrom = undefined;
		this.epoch++;
	}

	/** The limit as an answer of the current window tells it (see `limit`). */
	learnLimit(told: RateLimitHeaders): void {
		this.mostSeen = Math.max(this.mostSeen, (told.remaining ?? -1) + 1);
		this.limit = told.limit ?? Math.max(this.mostSeen, this.mostSeenBefore);
		this.share.limit = this.limit;
	}

	/** Whether the limit was told, or seen over a window before this one: not only this probe's guess. */
	limitSeen(told: RateLimitHeaders): boolean {
		return told.limit !== undefined || this.mostSeenBefore > 0;
	}

	/** Takes the reset an answer of the current window names. */
	setReset(told: RateLimitHeaders, now: number): void {
		this.resetAt = this.reset.take(told, now);
	}

	/** A probe found room in a window that began at about `sentAt`: half of it or more, uncrowded. */
	probeAnswered(sentAt: number | undefined): void {
		if ((this.toldLow ?? 0) >= this.limit / 2) this.crowding = Math.max(0, this.crowding - 1);
		if (sentAt !== undefined && this.resetAt !== undefined)
			this.lengthMs = Math.max(this.lengthMs, this.resetAt - sentAt);
	}

	/** A probe refused, others having spent the window that ends at `until` (see MAX_CROWDING). */
	probeRefused(until: number): void {
		this.crowding = Math.min(MAX_CROWDING, this.crowding + 1);
		const skip = Math.floor(random() * 2 ** this.crowding) * this.lengthMs;
		this.probeAfter = until + Math.min(skip, MAX_SKIP_MS);
	}

	/** How long before a shared window's earliest end its spread ends (see SPREAD_MARGIN_MS). */
	spreadMargin(): number {
		const byAnswers = Math.min(SPREAD_MARGIN_MAX_MS, SPREAD_MARGIN_ANSWERS * (this.answerMs ?? 0));
		return Math.max(SPREAD_MARGIN_MS, byAnswers);
	}

	send(probe: boolean, now = currentTime()): Slot {
		this.burst ??= { last: 0 };
		const slot: Slot = {
			probe,
			epoch: this.epoch,
			seq: ++this.seq,
			sentAt: now,
			burst: this.burst,
		};
		this.burst.last = slot.seq;
		if (probe) {
			this.probing = slot.seq;
			if (this.reset.testDue) {
				slot.coarseTest = this.reset.testDue;
				this.reset.testDue = undefined;
			}
		}
		this.inFlight.set(slot.seq, { epoch: slot.epoch, sentAt: now });
		this.inFlightByEpoch.set(slot.epoch, this.inFlightOf(slot.epoch) + 1);
		return slot;
	}

	/** The next request sent begins another burst (see Slot.burst). */
	endBurst(): void {
		this.burst = undefined;
	}

	/** `now`: when its answer came (undefined: the slot was given back unused). */
	answered(slot: Slot, now?: number): void {
		this.forget(slot.seq);
		if (this.probing === slot.seq) this.probing = undefined;
		if (now !== undefined && slot.sentAt !== undefined && now >= slot.sentAt) {
			const took = now - slot.sentAt;
			this.answerMs = this.answerMs === undefined ? took : 0.8 * this.answerMs + 0.2 * took;
		}
	}
}
