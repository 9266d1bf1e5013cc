import { InFlight } from '../../../../../nodes/OutreachAutomation/transport/pacing/inflight';

describe('own requests in flight', () => {
	it('counts by window, and tells those sent after a request and those of earlier windows', () => {
		const flight = new InFlight();
		const first = flight.add(0, 1_000).seq;
		flight.add(0, 1_010);
		const third = flight.add(1, 1_020).seq;
		flight.add(1, 1_030);
		expect([flight.size, flight.of(0), flight.of(1), flight.before(1)]).toEqual([4, 2, 2, 2]);
		expect(flight.sentAfter(first)).toBe(3);
		flight.remove(first);
		// A request no longer in flight still orders the others: those sent after it.
		expect(flight.sentAfter(first)).toBe(3);
		expect(flight.sentAfter(third)).toBe(1);
		expect(flight.before(1)).toBe(1);
	});

	it('requests sent in one look share a burst; the next look begins another', () => {
		const flight = new InFlight();
		const a = flight.add(0, 0);
		const b = flight.add(0, 0);
		flight.endBurst();
		const c = flight.add(0, 0);
		expect(a.burst).toBe(b.burst);
		expect(a.burst.last).toBe(b.seq);
		expect(c.burst).not.toBe(a.burst);
	});

	it('before any answer the first request is hung after 4.5 s, any after it after 30 s', () => {
		const flight = new InFlight();
		const first = flight.add(0, 0).seq;
		// Its look is one of its own (see Key.firstAlarm); the key's one timer looks at 30 s.
		expect(flight.firstHungAt()).toBe(4_500);
		expect(flight.hungAt()).toBe(30_000);
		const expired: number[] = [];
		flight.expireHung(4_499, (seq) => expired.push(seq));
		expect(expired).toEqual([]);
		const second = flight.add(0, 4_500).seq;
		flight.expireHung(4_500, (seq) => expired.push(seq));
		expect(expired).toEqual([first]);
		// The second, sent when the first was given up, holds the others until an answer or 30 s.
		expect(flight.firstHungAt()).toBeUndefined();
		expect(flight.hungAt()).toBe(34_500);
		flight.expireHung(34_499, (seq) => expired.push(seq));
		expect(expired).toEqual([first]);
		flight.expireHung(34_500, (seq) => expired.push(seq));
		expect(expired).toEqual([first, second]);
	});

	it('a request is hung after ten answer times within 1-3 s, never before two; only the oldest are given up', () => {
		const flight = new InFlight();
		flight.add(0, 0);
		flight.timed(50);
		// Once an answer is in, the first request's own look is not wanted.
		expect(flight.firstHungAt()).toBeUndefined();
		flight.remove(1);
		expect(flight.hungAfterMs()).toBe(1_000);
		flight.timed(4_050); // smoothed: 0.8 x 50 + 0.2 x 4,050 = 850 ms
		expect(flight.answerMs).toBe(850);
		expect(flight.hungAfterMs()).toBe(3_000);
		const old = flight.add(0, 0).seq;
		flight.add(0, 2_000);
		// Looked at on a 250-ms step.
		expect(flight.hungAt()).toBe(3_000);
		const expired: number[] = [];
		flight.expireHung(3_100, (seq) => expired.push(seq));
		expect(expired).toEqual([old]);
		expect(flight.size).toBe(1);
	});

	it('an answer four answer times late (and over 250 ms) is stale', () => {
		const flight = new InFlight();
		expect(flight.stale(0, 10_000)).toBe(false);
		flight.timed(100);
		expect(flight.stale(0, 400)).toBe(false);
		expect(flight.stale(0, 401)).toBe(true);
	});
});
