/** `--known`: the simulator gates on violations the list does not name, and on listed ones that went away. */
import { checkKnown, knownOf } from './known';

const result = (seed: number, violations: string[]) => ({
	seed,
	kind: 'exact' as const,
	processes: 4,
	violations,
});

describe('the known violations of the simulator', () => {
	const run = [
		result(1, []),
		result(2, ['avoidable 429s 6.0% of 500', '80% of the limit used by 4 processes']),
		result(3, ['process 1 starved: 3 requests in windows 2-11 (a third of an equal share: 10.0)']),
	];

	it('lists each violating seed with its kinds of violation', () => {
		expect(knownOf(run)).toEqual({ 2: ['429s', 'used'], 3: ['starved'] });
	});

	it('passes a run that matches the list', () => {
		const check = checkKnown(run, knownOf(run));
		expect(check.ok).toBe(true);
		expect(check.report).toContain('2 scenarios listed; 0 violate in a new way, 0 now hold');
	});

	it('fails a scenario that held and now violates, and a known one violating in a new way', () => {
		const known = { 2: ['429s'], 3: ['starved'] };
		const check = checkKnown(
			[result(1, ['lost 1 items: 1x "Rate limit"']), ...run.slice(1)],
			known,
		);
		expect(check.ok).toBe(false);
		expect(check.report).toContain('2 violate in a new way');
		expect(check.report).toContain('seed 1 (exact, 4 processes): lost 1 items');
		expect(check.report).toContain('seed 2 (exact, 4 processes): 80% of the limit used');
	});

	it('fails a listed violation that no longer shows, so that the list only shrinks', () => {
		const check = checkKnown([result(1, []), result(2, []), run[2]], knownOf(run));
		expect(check.ok).toBe(false);
		expect(check.report).toContain('1 now hold');
		expect(check.report).toContain('seed 2 (exact, 4 processes): no longer 429s, used');
		expect(check.report).toContain('--write-known');
	});
});
