/** The simulator's summary table (worst and median per kind and process count) and a replay's timeline. */
import { KINDS } from './scenario';
import type { Measures, ScenarioResult } from './simulate';
import type { TimelineEntry } from './service';

interface Done {
	result: ScenarioResult;
	measures: Measures;
}

function median(values: number[]): number | undefined {
	if (!values.length) return undefined;
	const sorted = [...values].sort((a, b) => a - b);
	return sorted[Math.floor((sorted.length - 1) / 2)];
}

const pct = (v: number | undefined) => (v === undefined ? '-' : `${(100 * v).toFixed(1)}%`);
const times = (v: number | undefined) => (v === undefined ? '-' : `${v.toFixed(2)}x`);

/** What a violation is about, for the table: its first words. */
export function violationKind(violation: string): string {
	if (violation.startsWith('lost')) return 'lost';
	if (violation.includes('carried out twice')) return 'duplicated';
	if (violation.startsWith('avoidable')) return '429s';
	if (violation.startsWith('wall')) return 'wall';
	if (violation.includes('of the limit used')) return 'used';
	if (violation.includes('starved')) return 'starved';
	if (violation.includes('looks')) return 'looks';
	return 'failed';
}

/** Process counts as the table groups them: each its own, or (`bucketed`) 1, 2-4, 8-16 and 32-64. */
export function group(processes: number, bucketed: boolean): string {
	if (!bucketed) return String(processes);
	if (processes === 1) return '1';
	if (processes <= 4) return '2-4';
	if (processes <= 16) return '8-16';
	return '32-64';
}

export function summaryTable(done: Done[], bucketed = false): string {
	const rows: string[][] = [
		[
			'kind',
			'processes',
			'scenarios',
			'violating',
			'429s worst (median)',
			'wall/floor worst (median)',
			'limit used worst (median)',
			'looks/request worst',
			'violations',
			'example seeds',
		],
	];
	const groups = new Map<string, Done[]>();
	for (const d of done) {
		const name = `${d.result.kind}|${group(d.result.processes, bucketed)}`;
		if (!groups.has(name)) groups.set(name, []);
		groups.get(name)!.push(d);
	}
	const order = [...groups.keys()].sort((a, b) => {
		const [ka, pa] = a.split('|');
		const [kb, pb] = b.split('|');
		const byKind =
			KINDS.indexOf(ka as (typeof KINDS)[number]) - KINDS.indexOf(kb as (typeof KINDS)[number]);
		return byKind || parseInt(pa, 10) - parseInt(pb, 10);
	});
	for (const name of order) {
		const group = groups.get(name)!;
		const [kind, processes] = name.split('|');
		const shares = group.map((d) => d.measures.avoidableShare);
		const walls = group.map((d) => d.measures.wallRatio);
		const used = group.map((d) => d.measures.used).filter((u): u is number => u !== undefined);
		const failing = group.filter((d) => !d.result.ok);
		const kinds = new Map<string, number>();
		for (const d of failing)
			for (const v of new Set(d.result.violations.map(violationKind)))
				kinds.set(v, (kinds.get(v) ?? 0) + 1);
		rows.push([
			kind,
			processes,
			String(group.length),
			String(failing.length),
			`${pct(Math.max(...shares))} (${pct(median(shares))})`,
			`${times(Math.max(...walls))} (${times(median(walls))})`,
			used.length ? `${pct(Math.min(...used))} (${pct(median(used))})` : '-',
			Math.max(...group.map((d) => d.measures.looksPerRequest)).toFixed(2),
			[...kinds].map(([k, c]) => `${k} ${c}`).join(', ') || '-',
			failing
				.slice(0, 3)
				.map((d) => d.result.seed)
				.join(' ') || '-',
		]);
	}
	const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
	const line = (r: string[]) => `| ${r.map((cell, c) => cell.padEnd(widths[c])).join(' | ')} |`;
	return [
		line(rows[0]),
		`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`,
		...rows.slice(1).map(line),
	].join('\n');
}

export function printTimeline(timeline: TimelineEntry[], startAt: number): void {
	for (const entry of timeline) {
		const t = ((entry.t - startAt) / 1000).toFixed(3).padStart(10);
		console.log(
			`${t} s  process ${String(entry.process).padEnd(3)} ${entry.item.padEnd(10)} ${entry.event}`,
		);
	}
}
