/**
 * The one writer of a key's state. Everything that changes what a process knows of its window comes
 * here as an event: an answer, a 429, a grant the policy made, a slot given back, the pump's look at
 * the clock. The policy (policy.ts) only reads; the pump (index.ts) passes events and decisions.
 */
import { random } from '../clock';
import type { HeaderBag } from './headers';
import { observeAnswer, observeRefusal } from './answers';
import type { Decision } from './policy';
import type { Slot, Window } from './window';

export type Event =
	/** An answer (any status) or, with neither `headers` nor `status`, a request that got none. */
	| { kind: 'answer'; slot: Slot; headers: HeaderBag; now: number; status?: number }
	/** A 429 to `slot`: `fallback` is when to try again if it names no time. */
	| { kind: 'refusal'; slot?: Slot; headers: HeaderBag; fallback: number; now: number }
	/** The policy granted the head of the queue. */
	| { kind: 'grant'; decision: Decision; now: number }
	/** A slot given back unused: the request was not sent. */
	| { kind: 'cancel'; slot: Slot; now: number }
	/** The pump starts a look: gives up on hung requests if the timer rang on time. */
	| { kind: 'look'; now: number; expireHung: boolean }
	/** Before each decision: a reset that passed ends its window; projected windows take credit. */
	| { kind: 'tick'; now: number }
	/** The policy asked to take the server's sure figure as what is left. */
	| { kind: 'resume'; remaining: number }
	/** The policy asked for this process's lot for a window's last requests. */
	| { kind: 'draw'; chance: number };

type Refusal = Extract<Event, { kind: 'refusal' }>;
type Grant = Extract<Event, { kind: 'grant' }>;

export function observe(
	window: Window,
	event: Refusal,
): { until: number | undefined; crowded: boolean };
export function observe(window: Window, event: Grant): Slot | undefined;
export function observe(window: Window, event: Exclude<Event, Refusal | Grant>): void;
export function observe(
	window: Window,
	event: Event,
): Slot | { until: number | undefined; crowded: boolean } | undefined {
	switch (event.kind) {
		case 'answer': {
			const { status } = event;
			if (status !== undefined && status !== 429 && status < 500) window.progress++;
			observeAnswer(window, event.slot, event.headers, event.now, status);
			return undefined;
		}
		case 'refusal': {
			const refused = observeRefusal(window, event.headers, event.fallback, event.now, event.slot);
			if (refused.crowded) window.crowdedOut++;
			return refused;
		}
		case 'grant':
			return grant(window, event.decision, event.now);
		case 'cancel':
			cancel(window, event.slot, event.now);
			return undefined;
		case 'look':
			if (event.expireHung) window.expireHung(event.now);
			// What this look sends goes at once: one burst.
			window.flight.endBurst();
			return undefined;
		case 'tick':
			if (window.resetAt !== undefined && event.now >= window.resetAt) window.roll();
			if (window.blind.active) window.blind.roll(event.now);
			return undefined;
		case 'resume':
			window.remaining = event.remaining;
			return undefined;
		case 'draw':
			window.share.drawLot(random() < event.chance);
			return undefined;
	}
}

/** Carries out a grant of the policy: the slot the head goes with (undefined: it waits). */
function grant(window: Window, decision: Decision, now: number): Slot | undefined {
	if ('tooLongUntil' in decision)
		return { probe: false, epoch: window.epoch, seq: 0, tooLongUntil: decision.tooLongUntil };
	if (!('grant' in decision)) return undefined;
	if (decision.grant === 'probe') return window.send(true, now);
	if (decision.grant === 'blind') {
		const slot = window.send(false, now);
		slot.blind = window.blind.take(now);
		return slot;
	}
	if (decision.grant === 'span') {
		if (decision.opens) window.span.openAt(now);
		window.span.take();
		return window.send(false, now);
	}
	if (decision.nextSendAt !== undefined) window.nextSendAt = decision.nextSendAt;
	window.remaining! -= 1;
	const slot = window.send(false, now);
	if (decision.last) slot.last = true;
	return slot;
}

/** A slot given back unused: its place in the window (or span, or projected window) is free again. */
function cancel(window: Window, slot: Slot, now: number): void {
	window.answered(slot);
	if (slot.blind !== undefined) window.blind.refund(slot.blind, now);
	else if (window.unpaced) {
		if (!slot.probe) window.span.refund(slot.sentAt ?? 0);
	} else if (!slot.probe && slot.epoch === window.epoch && window.remaining !== undefined)
		window.remaining++;
}
