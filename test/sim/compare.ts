/**
 * `npm run simulate -- --compare before.json after.json`: what a change did to the scenarios, from two
 * `--json` runs. Many scenarios sit on a bound, so a small change of policy moves some each way: the
 * scenarios fixed and broken (by kind and process count) say more than the net count.
 */
import type { ScenarioResult } from './simulate';
import { group, violationKind } from './summary';

type Results = Pick<ScenarioResult, 'seed' | 'kind' | 'processes' | 'lost' | 'ok' | 'violations'>;

const BUCKETS = ['1', '2-4', '8-16', '32-64'];

function counts(keys: string[]): string {
	const tally = new Map<string, number>();
	for (const key of keys) tally.set(key, (tally.get(key) ?? 0) + 1);
	return (
		[...tally]
			.sort((a, b) => b[1] - a[1])
			.map(([key, n]) => `${key} ${n}`)
			.join(', ') || '-'
	);
}

function byViolation(results: Results[]): Map<string, number> {
	const tally = new Map<string, number>();
	for (const r of results)
		for (const v of r.violations)
			tally.set(violationKind(v), (tally.get(violationKind(v)) ?? 0) + 1);
	return tally;
}

/** A short report: violating before and after, fixed and broken, by bucket and by violation, items lost. */
export function compareRuns(before: Results[], after: Results[]): string {
	const old = new Map(before.map((r) => [r.seed, r]));
	const both = after.filter((r) => old.has(r.seed));
	const where = (r: Results) => `${r.kind} ${group(r.processes, true)}`;
	const fixed = both.filter((r) => r.ok && !old.get(r.seed)!.ok);
	const broken = both.filter((r) => !r.ok && old.get(r.seed)!.ok);
	const changed = both.filter((r) => JSON.stringify(r) !== JSON.stringify(old.get(r.seed))).length;
	const violating = (rs: Results[]) => rs.filter((r) => !r.ok).length;
	const lost = (rs: Results[]) => rs.reduce((n, r) => n + r.lost, 0);
	const lostIn = (rs: Results[]) => rs.filter((r) => r.lost > 0).length;
	const oldKinds = byViolation(before);
	const newKinds = byViolation(after);
	const lines = [
		`${both.length} scenarios in both runs, ${changed} with a different result`,
		`violating: ${violating(before)} -> ${violating(after)}`,
		`fixed ${fixed.length}: ${counts(fixed.map(where))}`,
		`broken ${broken.length}: ${counts(broken.map(where))}`,
		...broken.slice(0, 10).map((r) => `  seed ${r.seed} (${where(r)}): ${r.violations.join('; ')}`),
		`violating by processes: ${BUCKETS.map((b) => {
			const inBucket = (rs: Results[]) => rs.filter((r) => group(r.processes, true) === b);
			return `${b} ${violating(inBucket(before))} -> ${violating(inBucket(after))}`;
		}).join(', ')}`,
		`violations: ${[...new Set([...oldKinds.keys(), ...newKinds.keys()])]
			.map((k) => `${k} ${oldKinds.get(k) ?? 0} -> ${newKinds.get(k) ?? 0}`)
			.join(', ')}`,
		`items lost: ${lost(before)} in ${lostIn(before)} scenarios -> ${lost(after)} in ${lostIn(after)}`,
	];
	return lines.join('\n');
}
