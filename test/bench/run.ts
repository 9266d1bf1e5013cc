/**
 * `npm run bench [-- --quick] [-- --json <file>] [-- --runs <n>] [-- --only <keys>] [-- --keep]`
 *
 * Measures the packed package inside a real n8n 2.41.1 (Node 24, provisioned by test/n8n/runtime.ts) against
 * the sandbox API server with a compressed rate-limit window, side by side with n8n's own HTTP Request node
 * doing the same job in the same n8n, against the same sandbox, in the same run. Not part of the tests.
 *
 * The scenarios are registered in scenarios.ts; world.ts starts the sandbox and n8n, runs.ts measures each
 * run, figures.ts holds what a scenario reports and its targets, report.ts prints the table.
 *
 * Diagnostics: BENCH_DEBUG=1 logs every request and the bursts per window; BENCH_N8N_ENV="K=V,..." passes
 * settings to n8n (e.g. N8N_EXPRESSION_ENGINE=legacy) and records them in the JSON.
 *
 * The rate limit: 100 / 20 requests per 2 s window (X-RateLimit-Reset in epoch ms). --quick divides the
 * limit by 5 with the data, so each of its scenarios needs as many windows as in the full run.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';

import { N8N_VERSION, onSignals } from '../n8n/runtime';
import {
	evaluate,
	fmt,
	round2,
	type BenchReport,
	type ScenarioKey,
	type ScenarioResult,
	type Target,
} from './figures';
import { FLOOR_EXPLANATION, machine } from './measure';
import { printTable } from './report';
import { SCENARIOS } from './scenarios';
import { extraN8nEnv, FULL, log, QUICK, startWorld, type Sizes, type World } from './world';

const SCENARIO_KEYS = SCENARIOS.map((s) => s.key);

interface Args {
	quick: boolean;
	json?: string;
	runs?: number;
	only?: Set<ScenarioKey>;
	keep: boolean;
}

function usage(): never {
	process.stderr.write(
		`usage: npm run bench -- [--quick] [--json <file>] [--runs <n>] [--only ${SCENARIO_KEYS.join(',')}] [--keep]\n`,
	);
	process.exit(2);
}

function parseArgs(argv: string[]): Args {
	const args: Args = { quick: false, keep: false };
	for (let i = 0; i < argv.length; i++) {
		const arg = argv[i];
		const value = () => {
			const next = argv[++i];
			if (next === undefined) usage();
			return next;
		};
		if (arg === '--quick') args.quick = true;
		else if (arg === '--keep') args.keep = true;
		else if (arg === '--json') args.json = value();
		else if (arg.startsWith('--json=')) args.json = arg.slice('--json='.length);
		else if (arg === '--runs' || arg.startsWith('--runs=')) {
			const n = Number(arg.includes('=') ? arg.split('=')[1] : value());
			if (!Number.isInteger(n) || n < 1) usage();
			args.runs = n;
		} else if (arg === '--only' || arg.startsWith('--only=')) {
			const keys = (arg.includes('=') ? arg.split('=')[1] : value())
				.split(',')
				.map((k) => k.trim());
			if (keys.some((k) => !SCENARIO_KEYS.includes(k as ScenarioKey))) usage();
			args.only = new Set(keys as ScenarioKey[]);
		} else if (arg === '--help' || arg === '-h') usage();
		else usage();
	}
	return args;
}

// ---------------------------------------------------------------------------------------------------------

async function main(): Promise<void> {
	const args = parseArgs(process.argv.slice(2));
	const sizes: Sizes = { ...(args.quick ? QUICK : FULL) };
	if (args.runs) sizes.runs = args.runs;
	const wanted = (key: ScenarioKey) => !args.only || args.only.has(key);
	const startedAt = new Date();
	const t0 = performance.now();
	const loadStart = os.loadavg()[0];
	if (loadStart > 0.5 * os.cpus().length) {
		log(
			`warning: the machine is busy (load ${loadStart.toFixed(2)} on ${os.cpus().length} CPUs): wall times will be longer`,
		);
	}
	log(
		`${sizes.mode} run: ${fmt(sizes.leads)} leads, ${sizes.items} items, backlog ${sizes.backlog}, ` +
			`${sizes.rateLimit} requests / ${sizes.windowMs / 1000} s, ${sizes.runs} run(s) per scenario`,
	);

	const ref: { world?: Partial<World> } = {};
	const cleanup = async () => {
		await ref.world?.n8n?.stop();
		await ref.world?.sandbox?.stop();
	};
	const removeFolder = () => {
		const folder = ref.world?.userFolder;
		if (folder && !args.keep) fs.rmSync(folder, { recursive: true, force: true });
	};
	// Ctrl+C: stop n8n and the sandbox, and remove the user folder unless asked to keep it.
	const stopSignals = onSignals(async () => {
		interrupted = true;
		log('interrupted: stopping n8n and the sandbox');
		await cleanup();
		removeFolder();
	});
	let failed = true;
	try {
		const world = await startWorld(sizes, ref);
		const scenarios: ScenarioResult[] = [];
		// Scenarios with targets of their own (the drain) are left out of the usual ones.
		const own: Target[] = [];
		const usual = new Set<ScenarioKey>();
		for (const entry of SCENARIOS.filter((x) => wanted(x.key))) {
			const results = await entry.run(world);
			scenarios.push(...results);
			if (entry.targets) own.push(...entry.targets(results));
			else usual.add(entry.key);
		}
		const report: BenchReport = {
			tool: 'n8n-nodes-outreach-automation bench',
			startedAt: startedAt.toISOString(),
			durationMs: Math.round(performance.now() - t0),
			mode: sizes.mode,
			sizes,
			machine: { ...machine(), loadStart: round2(loadStart), loadEnd: round2(os.loadavg()[0]) },
			n8n: {
				version: N8N_VERSION,
				node: 'v24 (provisioned)',
				pid: world.n8n.pid,
				startupMs: world.n8n.startupMs,
				peakResetSupported: world.peakResetSupported,
				extraEnv: extraN8nEnv(),
			},
			floorExplanation: FLOOR_EXPLANATION(sizes.rateLimit, sizes.windowMs, sizes.mode === 'quick'),
			scenarios,
			targets: [...evaluate(scenarios.filter((x) => usual.has(x.key))), ...own],
		};
		printTable(report);
		if (args.json) {
			const file = path.resolve(process.env.INIT_CWD ?? process.cwd(), args.json);
			fs.mkdirSync(path.dirname(file), { recursive: true });
			fs.writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
			log(`figures written to ${file}`);
		}
		failed = false;
	} finally {
		const world = ref.world;
		if (failed && !interrupted && world?.n8n) log(`n8n's log tail:\n${world.n8n.logTail(40)}`);
		await cleanup().catch(() => undefined);
		stopSignals();
		if (world?.userFolder) {
			if (args.keep || (failed && !interrupted)) log(`n8n user folder kept: ${world.userFolder}`);
			else removeFolder();
		}
		log(`done in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
	}
}

/** Set by Ctrl+C / SIGTERM: what fails after it is the shutdown, not the bench. */
let interrupted = false;

main().catch((error) => {
	if (interrupted) process.exit(130);
	process.stderr.write(
		`[bench] failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
	);
	process.exit(1);
});
