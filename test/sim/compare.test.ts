/** `--compare`: which scenarios a change fixed and broke, not only the net count. */
import { compareRuns } from './compare';

const result = (seed: number, processes: number, violations: string[], lost = 0) => ({
	seed,
	kind: 'exact' as const,
	processes,
	lost,
	ok: violations.length === 0,
	violations,
});

describe('comparing two simulator runs', () => {
	it('names the scenarios fixed and broken, by kind and processes, and the items lost', () => {
		const before = [
			result(1, 1, []),
			result(2, 3, ['avoidable 429s 6.0% of 500']),
			result(3, 64, ['lost 2 items: 2x "Rate limit"'], 2),
			result(4, 8, []),
		];
		const after = [
			result(1, 1, []),
			result(2, 3, []),
			result(3, 64, []),
			result(4, 8, ['80% of the limit used by 8 processes']),
		];
		const report = compareRuns(before, after);
		expect(report).toContain('4 scenarios in both runs, 3 with a different result');
		expect(report).toContain('violating: 2 -> 1');
		expect(report).toContain('fixed 2: exact 2-4 1, exact 32-64 1');
		expect(report).toContain('broken 1: exact 8-16 1');
		expect(report).toContain('seed 4 (exact 8-16): 80% of the limit used by 8 processes');
		expect(report).toContain(
			'violating by processes: 1 0 -> 0, 2-4 1 -> 0, 8-16 0 -> 1, 32-64 1 -> 0',
		);
		expect(report).toContain('429s 1 -> 0');
		expect(report).toContain('lost 1 -> 0');
		expect(report).toContain('used 0 -> 1');
		expect(report).toContain('items lost: 2 in 1 scenarios -> 0 in 0');
	});
});
