import {
	acquireSlot,
	windowForTests,
	releaseSlot,
	resetRateLimitState,
} from '../../../../../nodes/OutreachAutomation/transport/pacing';
import { RESET_MARGIN_MS } from '../../../../../nodes/OutreachAutomation/transport/constants';

describe('whole-second windows', () => {
	const coarse = (remaining: number, namedMs: number) => ({
		'x-ratelimit-limit': '10',
		'x-ratelimit-remaining': String(remaining),
		'x-ratelimit-reset': String(Math.round(namedMs / 1000)),
	});

	beforeEach(() => resetRateLimitState());

	/** A window of `key` half spent, on a server known (as its tests would teach) to round up, 5-s windows. */
	async function wholeSecondWindow(key: string) {
		const now = Date.now();
		const named = Math.ceil(now / 1000) * 1000 + 5000;
		const probe = (await acquireSlot(key))!;
		releaseSlot(key, probe, coarse(5, named), now);
		const window = windowForTests(key)!;
		window.reset.rounding = 'up';
		window.reset.whole = 'yes';
		window.reset.wholeMs = 5000;
		const slot = (await acquireSlot(key))!;
		expect(slot.probe).toBe(false);
		return { now, named, window, slot };
	}

	it('a request told one less than the limit, with a later reset, opened that window: its exact end is known, as a probe’s would be', async () => {
		const { now, named, window, slot } = await wholeSecondWindow('opener');
		// The answer comes from a new window (someone else's old one ended early): 9 of 10, five seconds on.
		const at = now + 300;
		releaseSlot('opener', slot, coarse(9, named + 5000), at);
		expect(window.reset.opened).toBe(at);
		// Waited out to five seconds after it opened it, not to the named second (up to a second later).
		expect(window.resetAt).toBe(at + 5000 + RESET_MARGIN_MS);
		expect(window.resetAt).toBeLessThanOrEqual(named + 5000 + RESET_MARGIN_MS);
	});

	it('a request told fewer than the limit less one did not open its window: the named second stands', async () => {
		const { now, named, window, slot } = await wholeSecondWindow('joiner');
		releaseSlot('joiner', slot, coarse(6, named + 5000), now + 300);
		expect(window.reset.opened).toBeUndefined();
		expect(window.resetAt).toBe(named + 5000 + RESET_MARGIN_MS);
	});

	/** A window opened by `key`'s probe, answered at `at` (20 ms after the server counted it), 5-s windows
	 * on a server known to round its resets down: the named second is the real reset's, cut. */
	async function openedRoundedDown(key: string, skewMs?: number) {
		const at = Math.ceil(Date.now() / 1000) * 1000 + 300;
		const named = Math.floor((at - 20 + 5000) / 1000) * 1000;
		const probe = (await acquireSlot(key))!;
		const window = windowForTests(key)!;
		window.reset.rounding = 'down';
		const date = skewMs === undefined ? {} : { date: new Date(at + skewMs).toUTCString() };
		releaseSlot(key, probe, { ...coarse(9, named), ...date }, at);
		return { at, named, window };
	}

	it('rounded down: a window this process opened is tested to end whole seconds after it opened, not a second after the named one', async () => {
		const { at, named, window } = await openedRoundedDown('down');
		expect(window.reset.opened).toBe(at);
		expect(window.resetAt).toBe(at + 5000 + RESET_MARGIN_MS);
		expect(window.resetAt).toBeLessThan(named + 1000);
		expect(window.reset.testDue).toBe('whole');
	});

	it('rounded down on a server whose clock is skewed: the reading may be a second off, so a second after the named one stands', async () => {
		const { window } = await openedRoundedDown('skewed', -60_000);
		expect(window.resetAt).toBe(window.reset.named! + 1000);
		expect(window.reset.testDue).toBeUndefined();
	});
});
