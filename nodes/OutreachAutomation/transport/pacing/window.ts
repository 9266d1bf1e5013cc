/**
 * What this process knows of one key's window: what the server last said, its own requests in flight
 * (InFlight), and what it inferred: others on the key (Share), a headerless limit (Span), the reset's
 * rounding (Reset).
 */
import { now as currentTime, random } from '../clock';
import type { RateLimitHeaders } from './headers';
import { InFlight } from './inflight';
import { Blind } from './blind';
import { Reset, type Test } from './reset';
import { Share, type ShareView } from './share';
import { Span, type SpanView } from './span';
import type { BlindView } from './blind';

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
	/** Sent in a projected window (blind.ts): that window's end. */
	blind?: number;
}

/** What the policy may read of a window: figures and queries, nothing that writes (observe.ts does). */
export type WindowView = Readonly<
	Pick<
		Window,
		| 'remaining'
		| 'toldLow'
		| 'resetAt'
		| 'limit'
		| 'nextSendAt'
		| 'probing'
		| 'probeAfter'
		| 'unpaced'
		| 'refreshFrom'
		| 'quiet'
		| 'inFlightNow'
		| 'spreadMargin'
	>
> & {
	readonly reset: Readonly<Pick<Reset, 'named' | 'coarse'>>;
	readonly flight: Readonly<Pick<InFlight, 'size' | 'lastSeq' | 'hungAt' | 'answerMs'>>;
	readonly share: ShareView;
	readonly span: SpanView;
	readonly blind: BlindView;
};

/** A shared window's spread ends this long before its earliest end, so its last requests land in it
 * (at most 2 s: a timeout must not take the spread). */
const SPREAD_MARGIN_MS = 250;
const SPREAD_MARGIN_ANSWERS = 4;
const SPREAD_MARGIN_MAX_MS = 2000;
/** A probe refused because others spent the window first: more probe than it holds. The next waits a
 * random number of windows from a range doubled after each such refusal, halved after a probe that
 * found half the window. */
const MAX_CROWDING = 5;
const MAX_SKIP_MS = 120_000;

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
	/** Own requests sent and not answered; how long answers take. */
	readonly flight = new InFlight();
	readonly share = new Share();
	/** The server sends no rate-limit headers: requests are paced by `span`. */
	unpaced = false;
	readonly span = new Span();
	/** Answers slower than the window: windows are projected (blind.ts). */
	readonly blind = new Blind();
	/** Answers the service gave on their merits (not 429, not 5xx): the key moves. */
	progress = 0;
	/** Probes refused because others spent the window first: the key moves, through them. */
	crowdedOut = 0;
	/** After an answer too late to tell what is left (InFlight.stale), the last request sent then. */
	refreshFrom: number | undefined;

	/** Nothing of this process in flight (queued requests are the queue's to tell). */
	get quiet(): boolean {
		return this.flight.size === 0 && this.probing === undefined;
	}

	inFlightNow(): number {
		return this.flight.of(this.epoch);
	}

	/** Requests of earlier windows unanswered: the server may count them in this one. */
	stragglers(): number {
		return this.flight.before(this.epoch);
	}

	/** Gives up on requests unanswered too long: spent, in this window only (a hung service's would hold
	 * every window after); their answers, if they come, are still read. */
	expireHung(now: number): void {
		this.flight.expireHung(now, (seq) => this.forget(seq));
	}

	/** Request `seq` holds no one any more: answered, given back or hung. */
	private forget(seq: number): void {
		// However the request sent after a late answer ends, the others need not wait for it.
		if (this.refreshFrom !== undefined && seq > this.refreshFrom) this.refreshFrom = undefined;
		this.flight.remove(seq);
		if (this.probing === seq) this.probing = undefined;
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
		const answerMs = this.flight.answerMs ?? 0;
		const byAnswers = Math.min(SPREAD_MARGIN_MAX_MS, SPREAD_MARGIN_ANSWERS * answerMs);
		return Math.max(SPREAD_MARGIN_MS, byAnswers);
	}

	send(probe: boolean, now = currentTime()): Slot {
		const { seq, burst } = this.flight.add(this.epoch, now);
		const slot: Slot = { probe, epoch: this.epoch, seq, sentAt: now, burst };
		if (probe) {
			this.probing = slot.seq;
			if (this.reset.testDue) {
				slot.coarseTest = this.reset.testDue;
				this.reset.testDue = undefined;
			}
		}
		return slot;
	}

	/** `now`: when its answer came (undefined: the slot was given back unused). */
	answered(slot: Slot, now?: number): void {
		this.forget(slot.seq);
		if (now !== undefined && slot.sentAt !== undefined && now >= slot.sentAt)
			this.flight.timed(now - slot.sentAt);
	}
}
