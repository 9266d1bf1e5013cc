/** The printed report: one Markdown table (readable in a terminal, pasteable into the README), then the notes. */
import { median, range } from './measure';
import type { BenchReport, ScenarioResult } from './figures';

const seconds = (ms: number) => (ms / 1000).toFixed(2);

function itemsCell(s: ScenarioResult): string {
	if (s.id === '4a') {
		const started = s.runs.reduce((sum, r) => sum + r.returned, 0);
		return started ? `${started} executions` : 'none emitted';
	}
	const worst = s.runs.reduce(
		(a, b) => (b.returned < a.returned || !b.complete ? b : a),
		s.runs[0],
	);
	const allComplete = s.runs.every((r) => r.complete);
	const dups = Math.max(
		...s.runs.map((r) => r.returned - r.distinct),
		...s.runs.map((r) => r.duplicatesCreated ?? 0),
	);
	const missing = Math.max(0, worst.expected - worst.distinct);
	const verdict = allComplete
		? 'ok'
		: missing
			? `NO, ${missing.toLocaleString('en-US')} missing`
			: 'NO';
	return `${worst.returned.toLocaleString('en-US')}/${worst.expected.toLocaleString('en-US')}${dups > 0 ? `, ${dups} dup` : ''} ${verdict}`;
}

function failedCell(s: ScenarioResult): string {
	const executions = s.runs.filter((r) => r.failedExecution).length;
	const items = s.runs.reduce((sum, r) => sum + r.failedItems, 0);
	const parts = [];
	if (executions) parts.push(`${executions}/${s.runs.length} exec`);
	if (items) parts.push(`${items} items`);
	// Runs that reported success but did not deliver everything: the worst kind of failure.
	const silent = s.runs.filter(
		(r) => !r.complete && !r.failedExecution && r.failedItems === 0,
	).length;
	if (silent) parts.push(`${silent}/${s.runs.length} silent`);
	return parts.length ? parts.join(', ') : '0';
}

function wallCells(s: ScenarioResult): [string, string] {
	const walls = s.runs.map((r) => r.wallMs).filter((w): w is number => w !== null);
	if (!walls.length) return ['-', '-'];
	// No floor: a limit no run reaches (11v).
	if (s.floor.floorMs <= 0) return [seconds(median(walls)), '-'];
	const ratios = walls.map((w) => w / s.floor.floorMs);
	const med = median(ratios);
	const max = Math.max(...ratios);
	return [
		seconds(median(walls)),
		walls.length > 1 ? `${med.toFixed(2)}x (max ${max.toFixed(2)})` : `${med.toFixed(2)}x`,
	];
}

/** Wall time from the first request the server received, and its ratio to the strict floor. */
function strictCells(s: ScenarioResult): [string, string] {
	const after = s.runs.map((r) => r.afterFirstMs).filter((v): v is number => v !== undefined);
	if (!after.length) return ['-', '-'];
	if (s.floor.strictMs <= 0) return [seconds(median(after)), '- (1 window)'];
	const ratios = after.map((v) => v / s.floor.strictMs);
	const max = Math.max(...ratios);
	const strict = `${s.floor.strictMs / 1000} s`;
	return [
		seconds(median(after)),
		after.length > 1
			? `${median(ratios).toFixed(2)}x of ${strict} (max ${max.toFixed(2)})`
			: `${median(ratios).toFixed(2)}x of ${strict}`,
	];
}

function floorCell(s: ScenarioResult): string {
	const { windows, windowMs, slackPerWindowMs } = s.floor;
	if (!windows) return 'none';
	return slackPerWindowMs
		? `${windows} x (${windowMs / 1000} + ${slackPerWindowMs / 1000}) s`
		: `${windows} x ${windowMs / 1000} s`;
}

function firstRequestCell(s: ScenarioResult): string {
	const values = s.runs.map((r) => r.firstRequestMs).filter((v): v is number => v !== undefined);
	return values.length ? seconds(median(values)) : '-';
}

function memoryCell(s: ScenarioResult): string {
	const peaks = s.runs.map((r) => r.peakRssKb).filter((p): p is number => p !== undefined);
	if (!peaks.length) return '-';
	const growth = s.runs
		.filter((r) => r.peakRssKb !== undefined && r.startRssKb !== undefined)
		.map((r) => r.peakRssKb! - r.startRssKb!);
	const peak = Math.round(Math.max(...peaks) / 1024);
	return growth.length ? `${peak} (+${Math.round(Math.max(...growth) / 1024)})` : String(peak);
}

export function tableRows(report: BenchReport): string[][] {
	const header = [
		'#',
		'scenario',
		'runs',
		'requests',
		'min',
		'429s',
		'failed',
		'items (worst run)',
		'wall s (median)',
		'1st request s',
		'floor',
		'wall/floor',
		'after 1st request s',
		'/ strict floor',
		'peak RSS MB (+growth)',
	];
	const rows = report.scenarios.map((s) => {
		const [wall, ratio] = wallCells(s);
		const [after, strict] = strictCells(s);
		const who = s.subject === 'http-request' ? ' [n8n HTTP Request]' : '';
		return [
			s.id,
			`${s.title}${who}`,
			String(s.runs.length),
			range(s.runs.map((r) => r.requests)),
			String(s.requestsMin),
			range(s.runs.map((r) => r.rateLimited)),
			failedCell(s),
			itemsCell(s),
			wall,
			firstRequestCell(s),
			floorCell(s),
			ratio,
			after,
			strict,
			memoryCell(s),
		];
	});
	return [header, ...rows];
}

export function markdownTable(rows: string[][]): string {
	const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
	const line = (cells: string[]) =>
		`| ${cells.map((cell, c) => cell.padEnd(widths[c])).join(' | ')} |`;
	return [
		line(rows[0]),
		`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`,
		...rows.slice(1).map(line),
	].join('\n');
}

export function machineLine(report: BenchReport): string {
	const m = report.machine;
	return (
		`${m.cpuModel}, ${m.cpus} CPUs, ${m.memoryGb} GB RAM, ${m.kernel}; n8n ${report.n8n.version} on Node 24 ` +
		`(bench and sandbox on Node ${m.node.replace(/^v/, '')}); ${report.startedAt.slice(0, 10)}` +
		(m.loadStart !== undefined ? `; load average ${m.loadStart} at start, ${m.loadEnd} at end` : '')
	);
}

export function printTable(report: BenchReport): void {
	const out: string[] = [];
	const { sizes } = report;
	out.push('');
	out.push(
		`Outreach Automation nodes in n8n ${report.n8n.version}: ${sizes.mode} run, ` +
			`${sizes.rateLimit} requests per ${sizes.windowMs / 1000} s window, per_page 100, ` +
			`${sizes.runs} run(s) per scenario (${sizes.idlePolls} idle polls)`,
	);
	out.push(`Machine: ${machineLine(report)}`);
	const extra = Object.entries(report.n8n.extraEnv);
	if (extra.length)
		out.push(`n8n settings changed for this run: ${extra.map(([k, v]) => `${k}=${v}`).join(', ')}`);
	out.push('');
	out.push(markdownTable(tableRows(report)));
	out.push('');
	out.push(
		'requests: /api/v1 requests the sandbox received, 429s included (a range when runs differ); min: the fewest',
	);
	out.push(
		'requests that can do the job; failed: failed executions, error items, and "silent" runs that ended successfully',
	);
	out.push(
		'without every item; 1st request: from the webhook call to the first request n8n sent (median);',
	);
	out.push(
		'after 1st request: from the first request the sandbox received to the complete answer (median), over the',
	);
	out.push('strict floor (windows - 1) x window;');
	out.push('items: returned/expected in the worst run, "ok" when every run returned every');
	out.push(
		'expected item exactly once (creates: exactly one lead per input item in the service, none twice; trigger:',
	);
	out.push(
		'every new message once, oldest first); peak RSS: VmHWM of the n8n process during the scenario (reset before',
	);
	out.push(
		report.n8n.peakResetSupported
			? 'each run through /proc/<pid>/clear_refs), with its growth over the RSS at the start of the run.'
			: 'each run was NOT possible here: these are the lifetime peaks so far), with growth over the start RSS.',
	);
	out.push('');
	out.push(report.floorExplanation);
	const notes = report.scenarios.flatMap((s) => s.notes.map((n) => `  ${s.id}: ${n}`));
	const errors = report.scenarios.flatMap((s) =>
		[...new Set(s.runs.map((r) => r.error).filter(Boolean))].map((e) => `  ${s.id}: ${e}`),
	);
	if (notes.length) out.push('', 'Notes:', ...notes);
	if (errors.length) out.push('', 'Errors seen:', ...errors);
	out.push('', 'Targets (this package):');
	for (const t of report.targets)
		out.push(`  ${t.met ? 'met   ' : 'MISSED'} ${t.scenario.padEnd(3)} ${t.target}: ${t.detail}`);
	out.push(
		'',
		`Total bench time ${(report.durationMs / 1000).toFixed(0)} s (n8n start ${(report.n8n.startupMs / 1000).toFixed(1)} s).`,
	);
	process.stdout.write(`${out.join('\n')}\n`);
}
