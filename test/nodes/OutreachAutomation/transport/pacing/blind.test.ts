/**
 * A service whose answers take longer than its window (blind.ts): the budget per projected window and
 * how late answers change it. The simulator proves the whole (test/sim/sim.test.ts, seed 97); these
 * pin down each rule with the answers that lead to it.
 */
import { Blind } from '../../../../../nodes/OutreachAutomation/transport/pacing/blind';

const T = Date.parse('2026-11-24T10:00:00.000Z');
const W = 1000;

/** Entered at T + 1.5 s with a limit of 1,000 per second, the last reset told at T + 1 s. */
function entered(limit = 1000): Blind {
	const blind = new Blind();
	blind.enter(limit, T + W, W, T + 1500);
	return blind;
}

/** Takes every request the projected window holding `from` allows; their marks and send times. */
function sendWindow(blind: Blind, from: number): { mark: number; at: number[] } {
	const end = T + W * Math.ceil((from - T + 1) / W);
	const at: number[] = [];
	let mark = 0;
	for (let now = from; ; ) {
		blind.roll(now);
		const next = blind.nextAt(now);
		if (next >= end) break;
		now = Math.max(now, next);
		mark = blind.take(now);
		at.push(now);
	}
	return { mark, at };
}

/** Answers every request of window `mark`, the lowest told `low`, `refused` of them 429. */
function answerAll(
	blind: Blind,
	mark: number,
	sent: number,
	low: number,
	refused = 0,
	now = mark + 2 * W,
): void {
	for (let i = 0; i < sent; i++) {
		const isRefused = i < refused;
		blind.answered(mark, now, {
			remaining: isRefused ? 0 : low,
			refused: isRefused,
			resetAt: mark,
		});
	}
}

/**
 * Rounds on a fresh budget: each sends a window (from T + 2 s, every 3 s) and has all its requests
 * answered a window and a half later, the lowest told `low`, `refused` of them 429. How many each
 * window sent, and the window after the last.
 */
function rounds(told: Array<[low: number, refused: number]>): number[] {
	const blind = entered();
	const sent: number[] = [];
	told.forEach(([low, refused], i) => {
		const start = T + 2000 + 3000 * i;
		const window = sendWindow(blind, start);
		sent.push(window.at.length);
		answerAll(blind, window.mark, window.at.length, low, refused, start + 1500);
	});
	sent.push(sendWindow(blind, T + 2000 + 3000 * told.length).at.length);
	return sent;
}

describe('answers slower than the window', () => {
	it('starts at a 64th of the limit per window, spread over it', () => {
		const blind = entered();
		const { at } = sendWindow(blind, T + 2000);
		expect(at).toHaveLength(15);
		// 15.6 a window: one every 64 ms, from the window's start.
		expect(at[1] - at[0]).toBeCloseTo(W / 15.625, 0);
	});

	it('doubles while windows stay more than half empty, then grows by a step', () => {
		// 900 left of 1,000: doubled; then 400 left: doubled, all would not fit, so one step (15.6) on.
		expect(
			rounds([
				[900, 0],
				[400, 0],
			]),
		).toEqual([15, 31, 46]);
	});

	it('a refused window keeps no more than passed; a nearly full one 85%', () => {
		// 9 of 15 passed: 15.6 * 0.6 = 9.4; then 20 left of 1,000: 9.4 * 0.85 = 8.0.
		expect(
			rounds([
				[0, 6],
				[20, 0],
			]),
		).toEqual([15, 9, 7]);
	});

	it('only a window sent after the last change changes the budget again', () => {
		const blind = entered();
		const first = sendWindow(blind, T + 2000);
		const second = sendWindow(blind, T + 3000);
		answerAll(blind, first.mark, 15, 0, 6, T + 3500);
		// Sent before the budget shrank: its 429s are the same overrun, already answered for.
		answerAll(blind, second.mark, 15, 0, 6, T + 4500);
		expect(sendWindow(blind, T + 5000).at).toHaveLength(9);
	});

	it('below one a window, one request every so many windows', () => {
		const blind = entered(32);
		// 0.5 a window: one in the first, none in the next, one after.
		expect(sendWindow(blind, T + 2000).at).toHaveLength(0);
		expect(sendWindow(blind, T + 3000).at).toHaveLength(1);
		blind.roll(T + 3100);
		expect(blind.nextAt(T + 3100)).toBe(T + 5000);
	});

	it('answers come well within a window again: the usual pacing takes over', () => {
		const blind = entered();
		expect(blind.leaves(400)).toBe(false);
		expect(blind.leaves(300)).toBe(true);
		expect(blind.active).toBe(false);
	});
});
