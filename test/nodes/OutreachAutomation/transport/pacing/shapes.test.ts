/**
 * A service whose rate-limit headers misbehave (other clients, several windows, a reset early or late, in
 * the past, negative or absurd counts): a request never waits longer than the named reset plus a second,
 * never a negative time, and never forever. One test per shape, on the pacer's real clock with short waits.
 */
import {
	acquireSlot,
	markExhausted,
	releaseSlot,
	resetRateLimitState,
	type Slot,
} from '../../../../../nodes/OutreachAutomation/transport/pacing';

const headers = (remaining: string | number, reset: string | number) => ({
	'x-ratelimit-remaining': String(remaining),
	'x-ratelimit-reset': String(reset),
});

/** How long `acquireSlot` takes to grant, or undefined when it has not granted within `limitMs`. */
async function grantTime(
	key: string,
	limitMs = 3000,
): Promise<{ ms: number; slot: Slot } | undefined> {
	const start = Date.now();
	const slot = await Promise.race([
		acquireSlot(key),
		new Promise<undefined>((r) => setTimeout(() => r(undefined), limitMs)),
	]);
	return slot ? { ms: Date.now() - start, slot } : undefined;
}

describe('rate-limit headers that misbehave', () => {
	beforeEach(() => resetRateLimitState());

	it('remaining jumps up with a later reset (the server began a new window early): taken at once', async () => {
		const probe = (await acquireSlot('jump'))!;
		releaseSlot('jump', probe, headers(3, Date.now() + 60_000));
		const a = (await acquireSlot('jump'))!;
		releaseSlot('jump', a, headers(2, Date.now() + 60_000));
		const b = (await acquireSlot('jump'))!;
		// b's answer comes from a new window of 50 that ends two minutes from now.
		releaseSlot('jump', b, headers(49, Date.now() + 120_000));
		let granted = 0;
		for (let i = 0; i < 20; i++) {
			const next = await grantTime('jump', 200);
			if (!next) break;
			granted++;
			releaseSlot('jump', next.slot, headers(48 - i, Date.now() + 120_000));
		}
		expect(granted).toBe(20);
	});

	it('a reset already in the past: no negative wait, the next request goes at once as a probe', async () => {
		const probe = (await acquireSlot('past'))!;
		releaseSlot('past', probe, headers(0, Date.now() - 5000));
		const next = await grantTime('past');
		expect(next).toBeDefined();
		expect(next!.ms).toBeLessThan(200);
		expect(next!.slot.probe).toBe(true);
	});

	it('a 429 whose reset is in the past waits the fallback, not a negative time', () => {
		const now = Date.now();
		const until = markExhausted('past429', headers(0, now - 5000), now + 700, now);
		expect(until).toBe(now + 700);
	});

	it('remaining 0 with a reset a second away: waits for it, no more than the named reset plus a second', async () => {
		const probe = (await acquireSlot('zero'))!;
		const reset = Date.now() + 1000;
		releaseSlot('zero', probe, headers(0, reset));
		const next = await grantTime('zero');
		expect(next).toBeDefined();
		expect(Date.now()).toBeGreaterThanOrEqual(reset);
		expect(Date.now()).toBeLessThanOrEqual(reset + 1000 + 100);
	});

	it('a negative remaining reads as none left: waits for the reset, not forever', async () => {
		const probe = (await acquireSlot('neg'))!;
		const reset = Date.now() + 800;
		releaseSlot('neg', probe, headers(-7, reset));
		const next = await grantTime('neg');
		expect(next).toBeDefined();
		expect(Date.now()).toBeGreaterThanOrEqual(reset);
		expect(Date.now()).toBeLessThanOrEqual(reset + 1000 + 100);
	});

	it('an absurd remaining is not trusted: requests are paced as without headers, not all at once', async () => {
		const probe = (await acquireSlot('absurd'))!;
		releaseSlot('absurd', probe, headers('99999999999', Date.now() + 60_000), Date.now(), 200);
		// Paced as a server without headers: slow start, a few in flight until answers come.
		let granted = 0;
		while (await grantTime('absurd', 100)) granted++;
		expect(granted).toBeGreaterThan(0);
		expect(granted).toBeLessThan(10);
	});

	it('a whole-second reset (epoch seconds): never more than a second past the named one', async () => {
		const probe = (await acquireSlot('coarse'))!;
		const named = Math.ceil((Date.now() + 1000) / 1000);
		releaseSlot('coarse', probe, headers(0, named));
		const next = await grantTime('coarse');
		expect(next).toBeDefined();
		expect(Date.now()).toBeLessThanOrEqual(named * 1000 + 1000 + 100);
	});

	it('a reset that arrives late (the probe after it is refused): waits for the new reset, bounded', async () => {
		const probe = (await acquireSlot('late'))!;
		releaseSlot('late', probe, headers(0, Date.now() + 300));
		const second = (await grantTime('late'))!;
		expect(second.slot.probe).toBe(true);
		// Still the old window: a 429 that names a reset 500 ms on.
		const now = Date.now();
		const told = headers(0, now + 500);
		releaseSlot('late', second.slot, told, now, 429);
		const until = markExhausted('late', told, now + 5000, now);
		expect(until).toBeLessThanOrEqual(now + 500 + 1000);
		const third = await grantTime('late');
		expect(third).toBeDefined();
		expect(Date.now()).toBeLessThanOrEqual(now + 500 + 1000 + 100);
	});

	it('several windows seen at once (answers from an old and a new window interleaved): no deadlock', async () => {
		const probe = (await acquireSlot('mixed'))!;
		releaseSlot('mixed', probe, headers(5, Date.now() + 300));
		const slots: Slot[] = [];
		for (let i = 0; i < 4; i++) slots.push((await grantTime('mixed'))!.slot);
		// Two answers from the old window, two from a new one that resets later.
		releaseSlot('mixed', slots[0], headers(1, Date.now() + 300));
		releaseSlot('mixed', slots[1], headers(40, Date.now() + 2000));
		releaseSlot('mixed', slots[2], headers(0, Date.now() + 300));
		releaseSlot('mixed', slots[3], headers(39, Date.now() + 2000));
		const next = await grantTime('mixed');
		expect(next).toBeDefined();
	});
});
