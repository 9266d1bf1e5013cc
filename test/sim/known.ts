/**
 * `npm run simulate -- --known <file>`: the simulator as a gate while some scenarios still violate the
 * goals. The file lists, per seed, the kinds of violation (429s, used, starved, wall, lost) a run of the
 * code as committed shows. The check fails on any other: a scenario that held and now violates, or a known
 * one violating in a new way (a regression); and on a listed one that now holds, so that the list only
 * shrinks (`--write-known <file>` writes it anew). The goals themselves stay as simulate.ts states them:
 * the list says how far the pacing is from them, seed by seed.
 */
import type { ScenarioResult } from './simulate';
import { group, violationKind } from './summary';

export type Known = Record<string, string[]>;

type Result = Pick<ScenarioResult, 'seed' | 'kind' | 'processes' | 'violations'>;

function kindsOf(result: Result): string[] {
	return [...new Set(result.violations.map(violationKind))].sort();
}

/** The known violations of a run, as the file keeps them. */
export function knownOf(results: Result[]): Known {
	const known: Known = {};
	for (const result of results) if (result.violations.length) known[result.seed] = kindsOf(result);
	return known;
}

/** Whether a run matches the known violations, and a report that says where it does not. */
export function checkKnown(results: Result[], known: Known): { ok: boolean; report: string } {
	const where = (r: Result) => `seed ${r.seed} (${r.kind}, ${group(r.processes, false)} processes)`;
	const regressions: string[] = [];
	const held: string[] = [];
	for (const result of results) {
		const listed = new Set(known[result.seed] ?? []);
		const kinds = kindsOf(result);
		const worse = result.violations.filter((v) => !listed.has(violationKind(v)));
		if (worse.length) regressions.push(`  ${where(result)}: ${worse.join('; ')}`);
		const fixed = [...listed].filter((kind) => !kinds.includes(kind));
		if (fixed.length) held.push(`  ${where(result)}: no longer ${fixed.join(', ')}`);
	}
	const listedSeeds = Object.keys(known).length;
	const lines = [
		`known violations: ${listedSeeds} scenarios listed; ${regressions.length} violate in a new way, ` +
			`${held.length} now hold where the list says they violate`,
	];
	if (regressions.length)
		lines.push('Violating in a new way (a regression of the pacing):', ...regressions.slice(0, 20));
	if (held.length)
		lines.push(
			'Holding now (shorten the list: npm run simulate -- --write-known <file>):',
			...held.slice(0, 20),
		);
	return { ok: regressions.length === 0 && held.length === 0, report: lines.join('\n') };
}
