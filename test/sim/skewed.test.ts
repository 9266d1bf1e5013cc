/**
 * `npm run simulate -- --skewed` (issue #65): a server clock 3-8 s off for some of the scenarios whose
 * resets are instants, drawn apart from the rest so that every other scenario stays as the gate knows it.
 */
import { scenarioOf, SKEWED_ENV } from './scenario';

const SEEDS = Array.from({ length: 400 }, (_, i) => i + 1);
const INSTANTS = new Set(['epoch-ms', 'epoch-s', 'http-date']);

function withSkewed<T>(run: () => T): T {
	process.env[SKEWED_ENV] = '1';
	try {
		return run();
	} finally {
		delete process.env[SKEWED_ENV];
	}
}

describe('the skewed scenarios', () => {
	it('skew about 30% of the instant-reset servers by 3 or 8 s and leave every other field alone', () => {
		const plain = SEEDS.map(scenarioOf);
		const skewed = withSkewed(() => SEEDS.map(scenarioOf));
		const moved = skewed.filter((s, i) => s.skewMs !== plain[i].skewMs);
		const instants = plain.filter((s) => INSTANTS.has(s.reset) && s.skewMs === 0).length;
		expect(moved.length / instants).toBeGreaterThan(0.2);
		expect(moved.length / instants).toBeLessThan(0.4);
		for (const s of moved) {
			expect(INSTANTS.has(s.reset)).toBe(true);
			expect([-8_000, -3_000, 3_000, 8_000]).toContain(s.skewMs);
		}
		skewed.forEach((s, i) => expect({ ...s, skewMs: plain[i].skewMs }).toEqual(plain[i]));
	});

	it('are not drawn without the option: the gate runs the scenarios its list was written from', () => {
		expect(SEEDS.map(scenarioOf)).toEqual(SEEDS.map(scenarioOf));
		expect(
			SEEDS.map(scenarioOf).filter((s) => [-8_000, -3_000, 3_000, 8_000].includes(s.skewMs)),
		).toEqual([]);
	});
});
