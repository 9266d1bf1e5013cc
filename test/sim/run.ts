/**
 * `npm run simulate`: the pacing on a virtual clock against simulated services, many seeded scenarios
 * (issue #38; docs/rate-limits.md, "The simulator").
 *
 *   npm run simulate                          seeds 1-2000 and the 100,000-item scenario, on 2 processes
 *   npm run simulate -- --scenarios 200       fewer (seeds 1-200)
 *   npm run simulate -- --json out.json       also writes every scenario's result
 *   npm run simulate -- --seed 17             replays one scenario and prints its timeline
 *   npm run simulate -- --workers 1           on one process
 *   npm run simulate -- --buckets             the table by 1, 2-4, 8-16 and 32-64 processes
 *   npm run simulate -- --skewed              30% of the instant-reset servers' clocks 3-8 s off ours
 *   npm run simulate -- --kinds slow,hung --processes 2,3,4
 *                                             only the seeds of those kinds and process counts
 *   npm run simulate -- --compare a.json b.json   what changed between two --json runs (fixed, broken)
 *   npm run simulate -- --known known.json    the gate in `npm test`: fails on any violation the file
 *                                             does not list, and on a listed one that no longer shows
 *   npm run simulate -- --write-known known.json  writes that file from this run
 *
 * Exits 1 when a scenario violates an invariant (the summary and the JSON say which); with --known, when
 * the run does not match the file (known.ts).
 */
import { fork } from 'node:child_process';
import { setMaxListeners } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';

import { KINDS, scenarioOf, SKEWED_ENV, VOLUME_SEED } from './scenario';
import { runScenario, SHORT_RUN_SLACK_MS, type Measures, type ScenarioResult } from './simulate';
import { compareRuns } from './compare';
import { checkKnown, knownOf, type Known } from './known';
import { group, printTimeline, summaryTable } from './summary';

// One execution's abort signal is listened to by each of its waits: hundreds, as in n8n.
setMaxListeners(0);

interface Done {
	result: ScenarioResult;
	measures: Measures;
}

function argument(name: string): string | undefined {
	const at = process.argv.indexOf(`--${name}`);
	return at >= 0 ? process.argv[at + 1] : undefined;
}

/** In a worker: runs the seeds it is sent, one by one, and sends back each result. */
async function work(seeds: number[]): Promise<void> {
	for (const seed of seeds) {
		const { result, measures } = await runScenario(seed);
		process.send!({ result, measures } satisfies Done);
	}
}

/** Splits the seeds over `workers` processes, each about as much work (by items). */
async function runAll(seeds: number[], workers: number): Promise<Done[]> {
	const shares: number[][] = Array.from({ length: workers }, () => []);
	const load = new Array<number>(workers).fill(0);
	const sized = seeds
		.map((seed) => ({ seed, cost: scenarioOf(seed).processes.reduce((n, p) => n + p.items, 0) }))
		.sort((a, b) => b.cost - a.cost);
	for (const { seed, cost } of sized) {
		const least = load.indexOf(Math.min(...load));
		shares[least].push(seed);
		load[least] += cost + 50;
	}
	const done: Done[] = [];
	let reported = 0;
	await Promise.all(
		shares.map(
			async (share) =>
				await new Promise<void>((resolve, reject) => {
					const child = fork(__filename, ['--worker', share.join(',')], {
						execArgv: ['-r', 'ts-node/register/transpile-only'],
						env: {
							...process.env,
							TS_NODE_PROJECT: path.join(__dirname, '..', '..', 'tsconfig.test.json'),
						},
						stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
					});
					child.on('message', (message: Done) => {
						done.push(message);
						if (done.length - reported >= 250) {
							reported = done.length;
							process.stderr.write(`${done.length} of ${seeds.length} scenarios\n`);
						}
					});
					child.on('exit', (code) =>
						code === 0 ? resolve() : reject(new Error(`a simulator worker exited with ${code}`)),
					);
				}),
		),
	);
	return done.sort((a, b) => a.result.seed - b.result.seed);
}

async function main(): Promise<void> {
	const worker = argument('worker');
	if (worker !== undefined) {
		await work(worker.split(',').filter(Boolean).map(Number));
		return;
	}
	const compare = argument('compare');
	if (compare !== undefined) {
		const read = (file: string) =>
			(JSON.parse(fs.readFileSync(file, 'utf8')) as { scenarios: ScenarioResult[] }).scenarios;
		const after = process.argv[process.argv.indexOf('--compare') + 2];
		console.log(compareRuns(read(compare), read(after)));
		return;
	}
	// Read by scenarioOf here and in the workers, which inherit the environment.
	if (process.argv.includes('--skewed')) process.env[SKEWED_ENV] = '1';
	if (process.env[SKEWED_ENV] && (argument('known') ?? argument('write-known')) !== undefined)
		throw new Error('--known and --write-known are of the default scenarios: drop --skewed');
	const seed = argument('seed');
	if (seed !== undefined) {
		const { result, measures, timeline } = await runScenario(Number(seed), { timeline: true });
		console.log(JSON.stringify(scenarioOf(Number(seed)), null, 1));
		printTimeline(timeline ?? [], scenarioOf(Number(seed)).startAt);
		console.log(JSON.stringify(result, null, 1));
		console.log(JSON.stringify(measures));
		process.exitCode = result.ok ? 0 : 1;
		return;
	}
	const count = Number(argument('scenarios') ?? 2000);
	const workers = Number(argument('workers') ?? 2);
	const seeds = Array.from({ length: count }, (_, i) => i + 1);
	if (argument('volume') !== 'no') seeds.push(VOLUME_SEED);
	const subset = subsetOf(seeds);
	if (subset.length < seeds.length && argument('write-known') !== undefined)
		throw new Error('--write-known needs every seed: drop --kinds and --processes');
	const started = Date.now();
	const done = await runAll(subset, workers);
	const seconds = (Date.now() - started) / 1000;
	console.log(summaryTable(done, process.argv.includes('--buckets')));
	const failing = done.filter((d) => !d.result.ok);
	console.log(
		`${done.length} scenarios in ${seconds.toFixed(1)} s on ${workers} process${workers === 1 ? '' : 'es'}: ` +
			`${failing.length} with violations`,
	);
	console.log(acceptanceNote(done.map((d) => d.result)));
	console.log(beforeAnswerNote(done.map((d) => d.result)));
	console.log(shortSharedNote(done.map((d) => d.result)));
	const json = argument('json');
	if (json) {
		fs.writeFileSync(json, JSON.stringify({ scenarios: done.map((d) => d.result) }, null, 1));
		console.log(`results: ${json}`);
	}
	process.exitCode = failing.length ? 1 : 0;
	const results = done.map((d) => d.result);
	const writeKnown = argument('write-known');
	if (writeKnown) {
		// One seed a line: a change to the list reads as the seeds it fixed or broke.
		const lines = Object.entries(knownOf(results)).map(
			([seed, kinds]) => `\t${JSON.stringify(seed)}: ${JSON.stringify(kinds).replace(/,/g, ', ')}`,
		);
		fs.writeFileSync(writeKnown, `{\n${lines.join(',\n')}\n}\n`);
		console.log(`known violations: ${writeKnown}`);
	}
	const known = argument('known');
	if (known) {
		const check = checkKnown(results, JSON.parse(fs.readFileSync(known, 'utf8')) as Known);
		console.log(check.report);
		process.exitCode = check.ok ? 0 : 1;
	}
}

/** The seeds of the kinds (`--kinds a,b`) and process counts (`--processes 2,4`) asked for, else all. */
function subsetOf(seeds: number[]): number[] {
	const kinds = argument('kinds')?.split(',');
	const unknown = kinds?.filter((kind) => !(KINDS as readonly string[]).includes(kind));
	if (unknown?.length)
		throw new Error(`--kinds: no kind ${unknown.join(', ')} (${KINDS.join(', ')})`);
	const counts = argument('processes')?.split(',').map(Number);
	return seeds.filter((seed) => {
		const scenario = scenarioOf(seed);
		if (kinds && !kinds.includes(scenario.kind)) return false;
		return !counts || counts.includes(scenario.processes.length);
	});
}

/** The acceptance: the share of scenarios that hold, per bucket of process counts (1: 99%,
 * 2-4 and 8-16: 97%, 32-64: 90%), and nothing lost nor carried out twice in any. */
const ACCEPTANCE: Record<string, number> = { '1': 0.99, '2-4': 0.97, '8-16': 0.97, '32-64': 0.9 };

function acceptanceNote(results: ScenarioResult[]): string {
	const parts = Object.entries(ACCEPTANCE).map(([bucket, wanted]) => {
		const of = results.filter((r) => group(r.processes, true) === bucket);
		const held = of.filter((r) => r.ok).length;
		const share = of.length ? held / of.length : 1;
		const verdict =
			share >= wanted ? 'met' : `UNMET by ${(100 * (wanted - share)).toFixed(1)} points`;
		return `${bucket}: ${held} of ${of.length} hold (${(100 * share).toFixed(1)}%, wanted ${100 * wanted}%: ${verdict})`;
	});
	const lost = results.filter((r) => r.lost > 0 || r.duplicated > 0).length;
	return `acceptance by processes: ${parts.join('; ')}; scenarios losing or repeating an item: ${lost}`;
}

/**
 * How many of the scenarios over the 429 goal would be within it without the 429s to requests sent before
 * their process had any answer (its first requests, blind to the others). The goal is unchanged: this
 * says how much of what is left no pacing could have known.
 */
function beforeAnswerNote(results: ScenarioResult[]): string {
	const over = results.filter((r) => r.violations.some((v) => v.startsWith('avoidable 429s')));
	const blind = over.filter(
		(r) => r.rateLimitedAll - r.rateLimitedBeforeAnswer <= 0.05 * r.requests,
	);
	const all = results.reduce((n, r) => n + r.rateLimitedAll, 0);
	const before = results.reduce((n, r) => n + r.rateLimitedBeforeAnswer, 0);
	return (
		`429s: ${before} of ${all} went to requests sent before their process had any answer; ` +
		`${blind.length} of the ${over.length} scenarios over 5% avoidable 429s are within 5% without them`
	);
}

/**
 * Runs of several processes whose items fit in one window (judged in simulate.ts): those that ended
 * more than SHORT_RUN_SLACK_MS after the floor plus the last process's start, listed by seed. Answers
 * that hang or take seconds are left out: they take that long by themselves.
 */
function shortSharedNote(results: ScenarioResult[]): string {
	const short = results.filter((r) => {
		const scenario = scenarioOf(r.seed);
		const room = scenario.limit - (scenario.foreign?.perWindow ?? 0);
		return r.processes > 1 && r.items <= room && r.kind !== 'hung' && r.kind !== 'slow';
	});
	const late = short.filter((r) => {
		const lastStart = Math.max(...scenarioOf(r.seed).processes.map((p) => p.startMs));
		return r.wallMs - r.floorMs - lastStart > SHORT_RUN_SLACK_MS;
	});
	return (
		`several processes with items for one window: ${late.length} of ${short.length} ended over ` +
		`${SHORT_RUN_SLACK_MS / 1000} s after the floor plus the last start` +
		(late.length ? ` (seeds ${late.map((r) => r.seed).join(', ')})` : '')
	);
}

main().catch((error) => {
	console.error(error);
	process.exitCode = 2;
});
