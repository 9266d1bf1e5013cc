/**
 * `npm run bench [-- --quick] [-- --json <file>] [-- --runs <n>] [-- --only <keys>] [-- --keep]`
 *
 * Measures the packed package inside a real n8n 2.41.1 (Node 24, provisioned by test/n8n/runtime.ts) against
 * the sandbox API server with a compressed rate-limit window, side by side with n8n's own HTTP Request node
 * doing the same job in the same n8n, against the same sandbox, in the same run. Not part of the tests.
 *
 * Scenarios (full / --quick):
 *   1   Lead > Get Many, Return All over 10,000 / 2,000 leads (per_page 100)
 *   1b  the same with a tenth of the window already spent by another client on the same key
 *   2   Lead > Create, 500 / 100 input items in one execution
 *   3   Lead > Get, 500 / 100 input items in one execution
 *   4a  Trigger: idle polls (n8n's own scheduled polls of the published workflow)
 *   4b  Trigger: a poll with a 1,000 / 200 message backlog
 *   5a  Scenario 1 with HTTP Request (page-number pagination, complete on a short page) + Split Out of `data`
 *   5b  ... with Retry On Fail
 *   5c  ... with the pagination interval set to the limit (window / limit ms between pages)
 *   5d  ... with a tenth of the window already spent (as 1b)
 *   5e  ... as 5d, with Retry On Fail and a completion expression that turns a 429 into an error
 *   6   headerless: Lead > Create, 300 / 100 concurrent items, a server sending no rate-limit headers
 *   7a/b coarse: Lead > Create, 500 / 100 items, X-RateLimit-Reset in epoch seconds / as an HTTP date
 *   8   bigPages: Lead > Get Many, Return All over 10,000 / 2,000 leads from a server allowing 1,000 per page
 *   (variants.ts holds their server settings and sizes)
 *   9   drain: Trigger, a 20,000 / 4,000 message backlog drained over several polls (test/bench/drain.ts)
 *
 * Diagnostics: BENCH_DEBUG=1 logs every request and the bursts per window; BENCH_N8N_ENV="K=V,..." passes
 * settings to n8n (e.g. N8N_EXPRESSION_ENGINE=legacy) and records them in the JSON.
 *
 * The rate limit: 100 / 20 requests per 2 s window (X-RateLimit-Reset in epoch ms). --quick divides the
 * limit by 5 with the data, so each of its scenarios needs as many windows as in the full run.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';

import {
	freePort,
	importCredentials,
	importWorkflows,
	N8N_VERSION,
	N8nServer,
	onSignals,
	packAndInstall,
	provision,
	type N8nOptions,
} from '../n8n/runtime';
import {
	startSandbox,
	type RequestLogEntry,
	type Sandbox,
	type SandboxConfig,
} from '../sandbox/server';
import {
	FLOOR_EXPLANATION,
	machine,
	median,
	peakRssKb,
	rateLimitFloor,
	resetPeak,
	rssKb,
	sleep,
	type Floor,
	type Machine,
} from './measure';
import { drainScenario, drainTargets } from './drain';
import { printTable } from './report';
import {
	bigPagesConfig,
	coarseConfig,
	coarseFloor,
	COARSE_FORMATS,
	headerlessConfig,
	VARIANTS_FULL,
	VARIANTS_QUICK,
	type VariantSizes,
} from './variants';
import {
	benchCases,
	CREDENTIAL,
	HEADER_CREDENTIAL,
	TRIGGER_NODE,
	TRIGGER_WORKFLOW_ID,
	triggerWorkflow,
	type BenchCase,
	type BenchCases,
} from './workflows';

// ---------------------------------------------------------------------------------------------------------
// Configuration

export interface Sizes {
	mode: 'full' | 'quick';
	leads: number;
	items: number;
	backlog: number;
	idlePolls: number;
	rateLimit: number;
	windowMs: number;
	runs: number;
	/** Seconds between the trigger's scheduled polls. */
	pollEverySeconds: number;
	/** Server variants (scenarios 6-8): their own sizes, limits and windows. */
	variants: VariantSizes;
}

const FULL: Sizes = {
	mode: 'full',
	leads: 10_000,
	items: 500,
	backlog: 1_000,
	idlePolls: 3,
	rateLimit: 100,
	windowMs: 2_000,
	runs: 3,
	pollEverySeconds: 5,
	variants: VARIANTS_FULL,
};
const QUICK: Sizes = {
	mode: 'quick',
	leads: 2_000,
	items: 100,
	backlog: 200,
	idlePolls: 2,
	rateLimit: 20,
	windowMs: 2_000,
	runs: 1,
	pollEverySeconds: 5,
	variants: VARIANTS_QUICK,
};

const PER_PAGE = 100;
const SCENARIO_KEYS = [
	'getAll',
	'http',
	'create',
	'get',
	'trigger',
	'headerless',
	'coarse',
	'bigPages',
	'drain',
] as const;
type ScenarioKey = (typeof SCENARIO_KEYS)[number];

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
// Figures

export interface RunFigures {
	run: number;
	/** /api/v1 requests the sandbox received, 429s included. */
	requests: number;
	rateLimited: number;
	/**
	 * Most requests in flight at the sandbox at once. Usually 1 even for 500 concurrent items: the sandbox
	 * answers each request before n8n's single thread gets the next one onto the wire.
	 */
	maxConcurrent: number;
	failedExecution: boolean;
	failedItems: number;
	/** Items the workflow returned (error items excluded). */
	returned: number;
	/** Distinct ids among them. */
	distinct: number;
	expected: number;
	/** Every expected item exactly once (and, for creates, exactly one lead per input item in the service). */
	complete: boolean;
	/** Creates only: leads created more than once for the same input item. */
	duplicatesCreated?: number;
	/** Execution wall time in ms (null: no execution, e.g. an idle poll). */
	wallMs: number | null;
	/** First to last request arrival at the sandbox, ms. */
	spanMs: number;
	/** From the webhook call to the first request's arrival: n8n's work before the node sends anything. */
	firstRequestMs?: number;
	/** From the first request the sandbox received to the complete answer (the strict floor's measure). */
	afterFirstMs?: number;
	startRssKb?: number;
	peakRssKb?: number;
	error?: string;
}

export interface ScenarioResult {
	id: string;
	key: ScenarioKey;
	title: string;
	/** Who does the work: this package or n8n's HTTP Request node. */
	subject: 'package' | 'http-request';
	/** How it was run. */
	how: string;
	requestsMin: number;
	floor: Floor;
	runs: RunFigures[];
	notes: string[];
	/** Targets that differ from the usual ones (server variants; the strict floor of scenario 2). */
	goals?: {
		/** Requests allowed at most (default: the minimum). */
		requestsMax?: number;
		/** No 429 at all (default: at most 1% of the requests). */
		no429?: boolean;
		/** Only "0 failures, every item once" is a target (the rest is reported). */
		failuresOnly?: boolean;
		/** Wall time from the first request within 1.1x the strict floor. */
		strict?: boolean;
	};
}

export interface Target {
	scenario: string;
	target: string;
	met: boolean;
	detail: string;
}

export interface BenchReport {
	tool: 'n8n-nodes-outreach-automation bench';
	startedAt: string;
	durationMs: number;
	mode: Sizes['mode'];
	sizes: Sizes;
	machine: Machine;
	n8n: {
		version: string;
		node: string;
		pid?: number;
		startupMs: number;
		peakResetSupported: boolean;
		/** Settings given through BENCH_N8N_ENV (none in a normal run). */
		extraEnv: Record<string, string>;
	};
	floorExplanation: string;
	scenarios: ScenarioResult[];
	targets: Target[];
}

// ---------------------------------------------------------------------------------------------------------
// The world: sandbox + n8n with the package, credentials and workflows

export interface World {
	sizes: Sizes;
	sandbox: Sandbox;
	n8n: N8nServer;
	options: N8nOptions;
	apiKey: string;
	cases: BenchCases;
	userFolder: string;
	peakResetSupported: boolean;
}

const log = (message: string) => process.stderr.write(`[bench] ${message}\n`);

function extraN8nEnv(): Record<string, string> {
	const raw = process.env.BENCH_N8N_ENV?.trim();
	if (!raw) return {};
	return Object.fromEntries(
		raw.split(',').map((pair) => {
			const at = pair.indexOf('=');
			if (at < 1) throw new Error(`BENCH_N8N_ENV: expected KEY=VALUE, got "${pair}"`);
			return [pair.slice(0, at).trim(), pair.slice(at + 1).trim()];
		}),
	);
}

async function startWorld(sizes: Sizes, cleanupRef: { world?: Partial<World> }): Promise<World> {
	const runtime = await provision();
	const sandbox = await startSandbox({
		apiKeys: [`bench-${randomBytes(12).toString('hex')}`],
		rateLimit: sizes.rateLimit,
		windowMs: sizes.windowMs,
		resetFormat: 'epoch-ms',
		maxPerPage: PER_PAGE,
		seed: { leads: 0, campaigns: 0, messages: 0 },
	});
	cleanupRef.world = { sandbox };
	const userFolder = fs.mkdtempSync(path.join(os.tmpdir(), 'outreach-bench-'));
	cleanupRef.world.userFolder = userFolder;
	const options: N8nOptions = {
		userFolder,
		port: await freePort(),
		brokerPort: await freePort(),
		// The bench reads n8n's figures from the sandbox and its own clock: keep n8n's log small.
		// BENCH_N8N_ENV="K=V,K2=V2" adds settings for experiments (reported in the JSON).
		env: { N8N_LOG_LEVEL: 'warn', ...extraN8nEnv() },
	};
	log(`packing the package into ${userFolder}`);
	await packAndInstall(userFolder);
	await importCredentials(runtime, options, [
		{
			...CREDENTIAL,
			type: 'outreachAutomationApi',
			data: { baseUrl: sandbox.url, apiKey: sandbox.apiKey },
		},
		{
			...HEADER_CREDENTIAL,
			type: 'httpHeaderAuth',
			data: { name: 'Authorization', value: `Bearer ${sandbox.apiKey}` },
		},
	]);
	const intervalMs = Math.ceil(sizes.windowMs / sizes.rateLimit);
	const cases = benchCases(sandbox.url, intervalMs);
	await importWorkflows(runtime, options, [
		...Object.values(cases).map((c) => c.workflow),
		triggerWorkflow(sizes.pollEverySeconds),
	]);
	const n8n = new N8nServer(runtime, options);
	cleanupRef.world.n8n = n8n;
	log('starting n8n');
	await n8n.start();
	log(`n8n ${N8N_VERSION} ready in ${(n8n.startupMs / 1000).toFixed(1)} s (pid ${n8n.pid})`);
	await n8n.ensureOwner({
		email: 'bench-owner@example.com',
		password: `Bench-${randomBytes(9).toString('base64url')}1`,
		firstName: 'Bench',
		lastName: 'Owner',
	});
	const apiKey = await n8n.createApiKey('bench');
	await n8n.publish(
		apiKey,
		Object.values(cases).map((c) => c.id),
	);
	const peakResetSupported = n8n.pid !== undefined && resetPeak(n8n.pid);
	return { sizes, sandbox, n8n, options, apiKey, cases, userFolder, peakResetSupported };
}

// ---------------------------------------------------------------------------------------------------------
// Helpers

type Json = Record<string, unknown>;

/** Waits until the rate window of the last scenario is over (on both sides), then resets the sandbox. */
async function prepare(
	world: World,
	seed: { leads: number; campaigns?: number; messages?: number },
	/** Sandbox settings of this run (a server variant), over the startup ones. */
	config?: Partial<SandboxConfig>,
): Promise<void> {
	const entries = world.sandbox.requests();
	const last = entries[entries.length - 1];
	// The node remembers each credential's window until its reset time: after it, the next run starts cold,
	// exactly as the sandbox's fresh window does. Whole-second reset headers are read up to 2 s later.
	const previous = world.sandbox.config();
	const coarse = previous.resetFormat === 'epoch-ms' ? 0 : 2_000;
	if (last) await sleep(last.time + previous.windowMs + coarse + 250 - Date.now());
	while (world.sandbox.stats().inFlight > 0) await sleep(50);
	world.sandbox.reset({ campaigns: 0, messages: 0, seed: 1, ...seed });
	if (config) world.sandbox.config(config);
}

function beginMemory(world: World): number | undefined {
	const pid = world.n8n.pid;
	if (pid === undefined) return undefined;
	if (world.peakResetSupported) resetPeak(pid);
	return rssKb(pid);
}

function endMemory(world: World): number | undefined {
	return world.n8n.pid === undefined ? undefined : peakRssKb(world.n8n.pid);
}

function trafficFigures(sandbox: Sandbox, entries: RequestLogEntry[] = sandbox.requests()) {
	const stats = sandbox.stats();
	const times = entries.map((e) => e.time);
	return {
		requests: entries.length,
		rateLimited: entries.filter((e) => e.status === 429).length,
		maxConcurrent: stats.maxConcurrent,
		spanMs: times.length ? Math.max(...times) - Math.min(...times) : 0,
	};
}

/** Ms from the webhook call to the first request n8n sent. */
function firstRequestMs(call: CallResult, entries: RequestLogEntry[]): number | undefined {
	return entries.length ? Math.min(...entries.map((e) => e.time)) - call.calledAt : undefined;
}

/** Ms from the first request the sandbox received to the complete answer. */
function afterFirstMs(call: CallResult, entries: RequestLogEntry[]): number | undefined {
	return entries.length ? call.answeredAt - Math.min(...entries.map((e) => e.time)) : undefined;
}

interface CallResult {
	/** Epoch ms when the webhook was called and when its answer was complete. */
	calledAt: number;
	answeredAt: number;
	status: number;
	items: Json[];
	error?: string;
	wallMs: number;
}

async function callCase(
	world: World,
	benchCase: BenchCase,
	body: unknown = {},
): Promise<CallResult> {
	const calledAt = Date.now();
	const started = performance.now();
	const { status, body: raw } = await world.n8n.callWebhook<unknown>(benchCase.path, body);
	const wallMs = Math.round(performance.now() - started);
	const answeredAt = Date.now();
	if (status === 200 && Array.isArray(raw))
		return { calledAt, answeredAt, status, items: raw as Json[], wallMs };
	const message =
		raw && typeof raw === 'object' && typeof (raw as Json).message === 'string'
			? String((raw as Json).message)
			: JSON.stringify(raw).slice(0, 300);
	return { calledAt, answeredAt, status, items: [], error: `HTTP ${status}: ${message}`, wallMs };
}

/** BENCH_DEBUG=1: every request of the run, and the start of the answer. */
function debugLog(world: World, call: CallResult, entries = world.sandbox.requests()): void {
	if (!process.env.BENCH_DEBUG) return;
	const t0 = entries[0]?.time ?? 0;
	if (entries.length <= 120) {
		for (const e of entries)
			log(`    +${e.time - t0} ms ${e.method} ${e.path} ${JSON.stringify(e.query)} -> ${e.status}`);
	}
	// Bursts (requests less than 300 ms apart): where the time goes between windows.
	let burst: RequestLogEntry[] = [];
	const flush = () => {
		if (!burst.length) return;
		const statuses = [...new Set(burst.map((e) => e.status))].join('/');
		log(
			`    burst at +${burst[0].time - t0} ms: ${burst.length} requests over ${burst[burst.length - 1].time - burst[0].time} ms (${statuses})`,
		);
		burst = [];
	};
	for (const e of entries) {
		if (burst.length && e.time - burst[burst.length - 1].time > 300) flush();
		burst.push(e);
	}
	flush();
	if (entries.length) {
		log(
			`    first request ${t0 - call.calledAt} ms after the call; answer ${call.answeredAt - entries[entries.length - 1].time} ms after the last request` +
				` (call ${new Date(call.calledAt).toISOString()}, first request ${new Date(t0).toISOString()}: to line up with n8n's log)`,
		);
	}
	log(
		`    answer: HTTP ${call.status}, ${call.items.length} items${call.error ? `, ${call.error}` : ''}; last item ${JSON.stringify(call.items[call.items.length - 1] ?? null).slice(0, 300)}`,
	);
}

const isErrorItem = (item: Json) =>
	item !== null && typeof item === 'object' && 'error' in item && !('id' in item);

function firstError(items: Json[]): string | undefined {
	const failed = items.find(isErrorItem);
	if (!failed) return undefined;
	const error = failed.error;
	return typeof error === 'string' ? error : JSON.stringify(error).slice(0, 300);
}

function scenario(
	world: World,
	id: string,
	key: ScenarioKey,
	title: string,
	subject: ScenarioResult['subject'],
	how: string,
	requestsMin: number,
	/** Requests the floor is computed for: more than requestsMin when part of the window is spent by others. */
	floorRequests = requestsMin,
): ScenarioResult {
	return {
		id,
		key,
		title,
		subject,
		how,
		requestsMin,
		floor: rateLimitFloor(floorRequests, world.sizes.rateLimit, world.sizes.windowMs),
		runs: [],
		notes: [],
	};
}

const fmt = (n: number) => n.toLocaleString('en-US');
const round2 = (n: number) => Math.round(n * 100) / 100;

// ---------------------------------------------------------------------------------------------------------
// Scenario 1 and 5: Return All over every lead

/** Spends `count` requests of the current window from outside n8n, as another workflow on the same key would. */
async function spendWindow(sandbox: Sandbox, count: number): Promise<void> {
	for (let i = 0; i < count; i++) {
		const response = await fetch(`${sandbox.url}/api/v1/leads?per_page=1`, {
			headers: { Authorization: `Bearer ${sandbox.apiKey}` },
		});
		await response.arrayBuffer();
		if (response.status !== 200) throw new Error(`spending the window: HTTP ${response.status}`);
	}
}

async function listAll(
	world: World,
	result: ScenarioResult,
	benchCase: BenchCase,
	preSpent = 0,
	variant?: { leads: number; config: Partial<SandboxConfig> },
): Promise<void> {
	const { sizes, sandbox } = world;
	for (let run = 1; run <= sizes.runs; run++) {
		await prepare(world, { leads: variant?.leads ?? sizes.leads }, variant?.config);
		const expectedIds = new Set(sandbox.store.leads.keys());
		const startRssKb = beginMemory(world);
		const started = performance.now();
		await spendWindow(sandbox, preSpent);
		const call = await callCase(world, benchCase);
		// Measured from the first request of the window when part of it was spent before.
		const wallMs = Math.round(performance.now() - started);
		const entries = sandbox.requests(preSpent);
		const all = sandbox.requests();
		const traffic = trafficFigures(sandbox, entries);
		debugLog(world, call, entries);
		const ids = call.items.map((item) => String(item.id));
		const distinct = new Set(ids);
		const complete =
			!call.error &&
			ids.length === expectedIds.size &&
			distinct.size === expectedIds.size &&
			ids.every((id) => expectedIds.has(id));
		await sleep(sizes.windowMs + 250); // n8n finishes saving the execution; the rate window closes
		result.runs.push({
			run,
			...traffic,
			failedExecution: Boolean(call.error),
			failedItems: 0,
			returned: ids.length,
			distinct: distinct.size,
			expected: expectedIds.size,
			complete,
			wallMs,
			firstRequestMs: firstRequestMs(call, entries),
			afterFirstMs: afterFirstMs(call, all),
			startRssKb,
			peakRssKb: endMemory(world),
			error: call.error,
		});
		log(
			`  run ${run}: ${traffic.requests} requests, ${traffic.rateLimited} x 429, ${ids.length} items, ` +
				`${(wallMs / 1000).toFixed(2)} s${call.error ? `, FAILED ${call.error}` : ''}`,
		);
	}
}

// ---------------------------------------------------------------------------------------------------------
// Scenario 2: create one lead per input item

async function createMany(
	world: World,
	result: ScenarioResult,
	variant?: { items: number; config: Partial<SandboxConfig>; runs?: number },
): Promise<void> {
	const { sizes, sandbox } = world;
	const runs = Math.min(sizes.runs, variant?.runs ?? sizes.runs);
	for (let run = 1; run <= runs; run++) {
		await prepare(world, { leads: 0 }, variant?.config);
		const marker = `bench${run}x${randomBytes(3).toString('hex')}`;
		const inputs = Array.from({ length: variant?.items ?? sizes.items }, (_, i) => ({
			first: `${marker}-${i}`,
			last: 'Benchmark',
		}));
		const startRssKb = beginMemory(world);
		const call = await callCase(world, world.cases.create, { items: inputs });
		const entries = sandbox.requests();
		const traffic = trafficFigures(sandbox, entries);
		debugLog(world, call);
		const ok = call.items.filter((item) => !isErrorItem(item));
		const okIds = new Set(ok.map((item) => String(item.id)));
		// What the service holds: exactly one lead per input item, none twice.
		const perName = new Map<string, number>();
		for (const lead of sandbox.store.leads.values()) {
			if (lead.first_name.startsWith(`${marker}-`))
				perName.set(lead.first_name, (perName.get(lead.first_name) ?? 0) + 1);
		}
		const duplicatesCreated = [...perName.values()].reduce((sum, n) => sum + n - 1, 0);
		const outputNames = ok.map((item) => String(item.first_name));
		const complete =
			!call.error &&
			perName.size === inputs.length &&
			duplicatesCreated === 0 &&
			okIds.size === inputs.length &&
			inputs.every((input, i) => outputNames[i] === input.first);
		await sleep(sizes.windowMs + 250);
		result.runs.push({
			run,
			...traffic,
			failedExecution: Boolean(call.error),
			failedItems: call.items.length - ok.length,
			returned: ok.length,
			distinct: okIds.size,
			expected: inputs.length,
			complete,
			duplicatesCreated,
			wallMs: call.wallMs,
			firstRequestMs: firstRequestMs(call, entries),
			afterFirstMs: afterFirstMs(call, entries),
			startRssKb,
			peakRssKb: endMemory(world),
			error: call.error ?? firstError(call.items),
		});
		log(
			`  run ${run}: ${traffic.requests} requests, ${traffic.rateLimited} x 429, ${ok.length} created (+${call.items.length - ok.length} failed), ${(call.wallMs / 1000).toFixed(2)} s`,
		);
	}
}

// ---------------------------------------------------------------------------------------------------------
// Scenario 3: get one lead per input item

async function getMany(world: World, result: ScenarioResult): Promise<void> {
	const { sizes, sandbox } = world;
	for (let run = 1; run <= sizes.runs; run++) {
		await prepare(world, { leads: sizes.items });
		const ids = [...sandbox.store.leads.keys()].slice(0, sizes.items);
		const startRssKb = beginMemory(world);
		const call = await callCase(world, world.cases.get, { items: ids.map((id) => ({ id })) });
		const entries = sandbox.requests();
		const traffic = trafficFigures(sandbox, entries);
		debugLog(world, call);
		const ok = call.items.filter((item) => !isErrorItem(item));
		const okIds = ok.map((item) => String(item.id));
		const complete =
			!call.error && okIds.length === ids.length && ids.every((id, i) => okIds[i] === id);
		await sleep(sizes.windowMs + 250);
		result.runs.push({
			run,
			...traffic,
			failedExecution: Boolean(call.error),
			failedItems: call.items.length - ok.length,
			returned: ok.length,
			distinct: new Set(okIds).size,
			expected: ids.length,
			complete,
			wallMs: call.wallMs,
			firstRequestMs: firstRequestMs(call, entries),
			afterFirstMs: afterFirstMs(call, entries),
			startRssKb,
			peakRssKb: endMemory(world),
			error: call.error ?? firstError(call.items),
		});
		log(
			`  run ${run}: ${traffic.requests} requests, ${traffic.rateLimited} x 429, ${ok.length} items (+${call.items.length - ok.length} failed), ${(call.wallMs / 1000).toFixed(2)} s`,
		);
	}
}

// ---------------------------------------------------------------------------------------------------------
// Scenario 4: the trigger, published, polled by n8n's own scheduler

interface ExecutionSummary {
	id: string;
	status: string;
	mode: string;
	startedAt?: string;
	stoppedAt?: string | null;
	finished?: boolean;
	data?: { resultData: { runData: Record<string, Array<{ data?: { main: Json[][] } }>> } };
}

async function triggerExecutions(world: World, includeData: boolean): Promise<ExecutionSummary[]> {
	const { data } = await world.n8n.publicApi<{ data: ExecutionSummary[] }>(
		world.apiKey,
		'GET',
		`/executions?workflowId=${TRIGGER_WORKFLOW_ID}&includeData=${includeData}&limit=20`,
	);
	return data;
}

const isPoll = (entry: RequestLogEntry) =>
	entry.method === 'GET' && entry.path === '/api/v1/messages';

/**
 * Waits for the next poll after request `since` (a burst of GET /messages) and returns its requests once it
 * has been quiet for `quietMs` with nothing in flight.
 */
async function nextPoll(
	world: World,
	since: number,
	timeoutMs: number,
	quietMs = 1_200,
): Promise<RequestLogEntry[]> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const entries = world.sandbox.requests(since);
		const last = entries[entries.length - 1];
		if (last && entries.every((e) => e.status !== null) && Date.now() - last.time >= quietMs) {
			const other = entries.filter((e) => !isPoll(e));
			if (other.length)
				throw new Error(
					`unexpected requests during a poll: ${other.map((e) => `${e.method} ${e.path}`).join(', ')}`,
				);
			return entries;
		}
		if (Date.now() > deadline) throw new Error(`no trigger poll within ${timeoutMs / 1000} s`);
		await sleep(100);
	}
}

const lastSeq = (sandbox: Sandbox) => {
	const entries = sandbox.requests();
	return entries.length ? entries[entries.length - 1].seq : 0;
};

async function trigger(
	world: World,
	idle: ScenarioResult,
	backlog: ScenarioResult,
): Promise<string[]> {
	const { sizes, sandbox, n8n } = world;
	const notes: string[] = [];
	const pollTimeout = (sizes.pollEverySeconds + 20) * 1000;
	await prepare(world, { leads: 50, campaigns: 2, messages: 150 });
	const before = new Set((await triggerExecutions(world, false)).map((e) => e.id));

	// Activation: n8n polls once right away; the trigger only takes note of where the list stands.
	let since = lastSeq(sandbox);
	await n8n.publish(world.apiKey, [TRIGGER_WORKFLOW_ID]);
	try {
		const activation = await nextPoll(world, since, pollTimeout);
		notes.push(`activation poll (takes note, emits nothing): ${activation.length} request(s)`);
		log(`  activation poll: ${activation.length} request(s)`);
		since = activation[activation.length - 1].seq;

		for (let run = 1; run <= sizes.idlePolls; run++) {
			const startRssKb = beginMemory(world);
			const poll = await nextPoll(world, since, pollTimeout);
			since = poll[poll.length - 1].seq;
			const executions = (await triggerExecutions(world, false)).filter((e) => !before.has(e.id));
			idle.runs.push({
				run,
				...trafficFigures(sandbox, poll),
				maxConcurrent: 1,
				failedExecution: false,
				failedItems: 0,
				returned: executions.length,
				distinct: executions.length,
				expected: 0,
				complete: executions.length === 0,
				wallMs: null,
				startRssKb,
				peakRssKb: endMemory(world),
				error: executions.length
					? `an idle poll started ${executions.length} execution(s)`
					: undefined,
			});
			log(`  idle poll ${run}: ${poll.length} request(s)`);
		}

		for (let run = 1; run <= sizes.runs; run++) {
			// Insert between two polls: wait until the last poll is well over.
			await sleep(300);
			const startRssKb = beginMemory(world);
			const known = new Set((await triggerExecutions(world, false)).map((e) => e.id));
			const inserted = sandbox.insertMessages({ count: sizes.backlog }).ids;
			since = lastSeq(sandbox);
			const poll = await nextPoll(world, since, pollTimeout);
			since = poll[poll.length - 1].seq;
			let execution: ExecutionSummary | undefined;
			const deadline = Date.now() + 60_000;
			while (!execution) {
				execution = (await triggerExecutions(world, true)).find(
					(e) => !known.has(e.id) && e.stoppedAt,
				);
				if (!execution) {
					if (Date.now() > deadline)
						throw new Error('the backlog poll started no execution within 60 s');
					await sleep(200);
				}
			}
			const emitted = execution.data?.resultData.runData[TRIGGER_NODE]?.[0]?.data?.main[0] ?? [];
			const ids = emitted.map((item) => String((item.json as Json | undefined)?.id ?? ''));
			const distinct = new Set(ids);
			const expected = new Set(inserted);
			// Oldest first: the order they were inserted in.
			const complete =
				ids.length === inserted.length &&
				distinct.size === expected.size &&
				inserted.every((id, i) => ids[i] === id);
			const firstRequest = Math.min(...poll.map((e) => e.time));
			const stoppedAt = Date.parse(String(execution.stoppedAt));
			// Executions started by later polls (if any) would be failures: this backlog must come exactly once.
			await sleep(500);
			backlog.runs.push({
				run,
				...trafficFigures(sandbox, poll),
				maxConcurrent: 1,
				failedExecution: execution.status !== 'success',
				failedItems: 0,
				returned: ids.length,
				distinct: distinct.size,
				expected: expected.size,
				complete,
				wallMs: stoppedAt - firstRequest,
				afterFirstMs: stoppedAt - firstRequest,
				startRssKb,
				peakRssKb: endMemory(world),
				error:
					execution.status !== 'success'
						? `execution ${execution.id} ended ${execution.status}`
						: undefined,
			});
			log(
				`  backlog poll ${run}: ${poll.length} request(s), ${ids.length} messages emitted, ${((stoppedAt - firstRequest) / 1000).toFixed(2)} s`,
			);
		}
		// Later polls must not emit the backlog again.
		const afterwards = await nextPoll(world, since, pollTimeout);
		const all = (await triggerExecutions(world, false)).filter((e) => !before.has(e.id));
		if (all.length !== sizes.runs) {
			backlog.runs[backlog.runs.length - 1].complete = false;
			backlog.runs[backlog.runs.length - 1].error =
				`${all.length} executions for ${sizes.runs} backlog(s)`;
		}
		notes.push(
			`poll after the last backlog: ${afterwards.length} request(s), executions in total: ${all.length} for ${sizes.runs} backlog(s)`,
		);
	} finally {
		await n8n
			.publicApi(world.apiKey, 'POST', `/workflows/${TRIGGER_WORKFLOW_ID}/unpublish`)
			.catch((error) =>
				log(`could not unpublish the trigger workflow: ${(error as Error).message}`),
			);
	}
	return notes;
}

// ---------------------------------------------------------------------------------------------------------
// Targets

function evaluate(scenarios: ScenarioResult[]): Target[] {
	const targets: Target[] = [];
	for (const s of scenarios.filter((x) => x.subject === 'package')) {
		const goals = s.goals ?? {};
		const requests = s.runs.map((r) => r.requests);
		const maxRequests = Math.max(...requests);
		if (!goals.failuresOnly) {
			const allowed = goals.requestsMax ?? s.requestsMin;
			targets.push({
				scenario: s.id,
				target:
					s.key === 'trigger' && s.id.startsWith('4a')
						? 'one request per idle poll'
						: allowed === s.requestsMin
							? 'requests = minimum'
							: `requests <= minimum + ${allowed - s.requestsMin}`,
				met: maxRequests <= allowed,
				detail: `${maxRequests} sent at most, minimum ${s.requestsMin}`,
			});
		}
		const failures = s.runs.filter(
			(r) => r.failedExecution || r.failedItems > 0 || !r.complete,
		).length;
		targets.push({
			scenario: s.id,
			target: '0 failures, every item exactly once',
			met: failures === 0,
			detail: failures
				? `${failures} of ${s.runs.length} runs failed or were incomplete`
				: `${s.runs.length} runs complete`,
		});
		if (goals.failuresOnly) continue;
		const worst429 = Math.max(...s.runs.map((r) => (r.requests ? r.rateLimited / r.requests : 0)));
		const most429 = Math.max(...s.runs.map((r) => r.rateLimited));
		targets.push(
			goals.no429
				? {
						scenario: s.id,
						target: '0 requests answered 429',
						met: most429 === 0,
						detail: `${most429} in the worst run`,
					}
				: {
						scenario: s.id,
						target: '<= 1% of requests answered 429',
						met: worst429 <= 0.01,
						detail: `${(worst429 * 100).toFixed(2)}% in the worst run`,
					},
		);
		const walls = s.runs.map((r) => r.wallMs).filter((w): w is number => w !== null);
		if (walls.length) {
			const worst = Math.max(...walls) / s.floor.floorMs;
			targets.push({
				scenario: s.id,
				target: s.floor.slackPerWindowMs
					? `wall time <= 1.1x the floor (+${s.floor.slackPerWindowMs / 1000} s per window)`
					: 'wall time <= 1.1x the floor',
				met: worst <= 1.1,
				detail: `${worst.toFixed(2)}x in the worst run (median ${(median(walls) / s.floor.floorMs).toFixed(2)}x)`,
			});
		}
		const after = s.runs.map((r) => r.afterFirstMs).filter((w): w is number => w !== undefined);
		if (goals.strict && after.length && s.floor.strictMs > 0) {
			const worst = Math.max(...after) / s.floor.strictMs;
			targets.push({
				scenario: s.id,
				target: 'wall from the first request <= 1.1x the strict floor',
				met: worst <= 1.1,
				detail: `${worst.toFixed(2)}x in the worst run (median ${(median(after) / s.floor.strictMs).toFixed(2)}x of ${s.floor.strictMs / 1000} s)`,
			});
		}
	}
	return targets;
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
		const { cases } = world;
		const s = sizes;
		const scenarios: ScenarioResult[] = [];
		// The fewest requests that prove a list complete without trusting meta.total (a server may send
		// it low, high, as text or not at all): every page, and the empty one after a last full page.
		const pages = Math.ceil(s.leads / PER_PAGE) + (s.leads % PER_PAGE === 0 ? 1 : 0);
		const how = 'n8n webhook';
		// Another workflow or tool on the same API key: a tenth of the window is gone when the job starts.
		const spent = Math.max(1, Math.round(s.rateLimit / 10));
		const sharedNote =
			`${spent} requests of the window are spent just before the run by another client on the same key; ` +
			'wall time counts from them, and the floor is computed for them plus the minimum';

		// Before scenario 1: the node remembers the page size each server served, and this sandbox (one origin
		// and key for the node) serves 100 per page to every other scenario.
		if (wanted('bigPages')) {
			const v = s.variants.bigPages;
			const r = scenario(
				world,
				'8',
				'bigPages',
				`Lead > Get Many, Return All (${fmt(v.leads)} leads), server allowing ${fmt(v.maxPerPage)} per page`,
				'package',
				how,
				Math.ceil(v.leads / v.maxPerPage),
			);
			r.goals = { requestsMax: r.requestsMin + 1 };
			r.notes.push(
				`sandbox maxPerPage ${v.maxPerPage}; target ceil(N / ${v.maxPerPage}) + at most 1 requests; the first run learns the size, later runs ask it at once`,
			);
			log(`scenario ${r.id}: ${r.title}`);
			await listAll(world, r, cases.getAll, 0, {
				leads: v.leads,
				config: bigPagesConfig(s.variants),
			});
			scenarios.push(r);
		}
		if (wanted('getAll')) {
			const r = scenario(
				world,
				'1',
				'getAll',
				`Lead > Get Many, Return All (${fmt(s.leads)} leads)`,
				'package',
				how,
				pages,
			);
			log(`scenario ${r.id}: ${r.title}`);
			await listAll(world, r, cases.getAll);
			scenarios.push(r);
			const shared = scenario(
				world,
				'1b',
				'getAll',
				`${r.title}, ${spent} of the window already spent`,
				'package',
				how,
				pages,
				pages + spent,
			);
			shared.notes.push(sharedNote);
			log(`scenario ${shared.id}: ${shared.title}`);
			await listAll(world, shared, cases.getAll, spent);
			scenarios.push(shared);
		}
		if (wanted('http')) {
			const interval = Math.ceil(s.windowMs / s.rateLimit);
			const variants: Array<[string, string, BenchCase, number, string]> = [
				['5a', 'HTTP Request + Split Out', cases.httpPlain, 0, ''],
				['5b', 'HTTP Request + Split Out, Retry On Fail (3 tries, 1 s)', cases.httpRetry, 0, ''],
				[
					'5c',
					`HTTP Request + Split Out, ${interval} ms between pages (= the limit)`,
					cases.httpInterval,
					0,
					'',
				],
				[
					'5d',
					`HTTP Request + Split Out, ${spent} of the window already spent`,
					cases.httpPlain,
					spent,
					sharedNote,
				],
				[
					'5e',
					`HTTP Request + Split Out, Retry On Fail, 429 as error (data?.length), ${spent} spent`,
					cases.httpRetrySafe,
					spent,
					`${sharedNote}; completion expression $response.body.data?.length < 100, so a 429 fails the try and Retry On Fail runs the node again from page 1`,
				],
			];
			for (const [id, title, benchCase, preSpent, note] of variants) {
				const r = scenario(world, id, 'http', title, 'http-request', how, pages, pages + preSpent);
				if (note) r.notes.push(note);
				log(`scenario ${r.id}: ${r.title}`);
				await listAll(world, r, benchCase, preSpent);
				scenarios.push(r);
			}
			scenarios
				.find((x) => x.id === '5a')
				?.notes.push(
					'completion expression $response.body.data.length < 100 (a short page ends it, so the empty page after the last full one is asked for too). On a 429 answer `data` is missing: the expression throws, n8n evaluates it to null and pagination ends without an error, dropping that page and every page after it (5d); Retry On Fail never sees an error to retry (5b)',
				);
		}
		if (wanted('create')) {
			const r = scenario(
				world,
				'2',
				'create',
				`Lead > Create (${s.items} items, one execution)`,
				'package',
				how,
				s.items,
			);
			r.goals = { strict: true };
			log(`scenario ${r.id}: ${r.title}`);
			await createMany(world, r);
			scenarios.push(r);
		}
		if (wanted('get')) {
			const r = scenario(
				world,
				'3',
				'get',
				`Lead > Get (${s.items} items, one execution)`,
				'package',
				how,
				s.items,
			);
			log(`scenario ${r.id}: ${r.title}`);
			await getMany(world, r);
			scenarios.push(r);
		}
		if (wanted('trigger')) {
			const pollHow = `n8n scheduled poll (every ${s.pollEverySeconds} s)`;
			const idle = scenario(world, '4a', 'trigger', 'Trigger: idle poll', 'package', pollHow, 1);
			const backlog = scenario(
				world,
				'4b',
				'trigger',
				`Trigger: poll with a ${fmt(s.backlog)}-message backlog`,
				'package',
				pollHow,
				// The new messages fill positions 1..backlog of the newest-first list: a client knows it has them all
				// only once it sees a message it already had (position backlog + 1) or the end of the list.
				Math.ceil((s.backlog + 1) / PER_PAGE),
			);
			log(`scenario 4: ${idle.title}; ${backlog.title}`);
			const notes = await trigger(world, idle, backlog);
			idle.notes.push(...notes);
			backlog.notes.push(
				'minimum: the list is newest first; the new messages fill its first positions, and a poll is sure it has them all only when it reaches a message it had seen, so ceil((backlog + 1) / 100) pages. Trusting meta.total instead would save that page only when the backlog fills whole pages, and would miss messages whenever some left the list (or the filter) meanwhile',
			);
			scenarios.push(idle, backlog);
		}

		if (wanted('coarse')) {
			const v = s.variants.coarse;
			for (const [suffix, format] of COARSE_FORMATS.map((f, i) => [`7${'ab'[i]}`, f] as const)) {
				const r = scenario(
					world,
					suffix,
					'coarse',
					`Lead > Create (${v.items} items, one execution), X-RateLimit-Reset ${format === 'epoch-s' ? 'in epoch seconds' : 'as an HTTP date'}`,
					'package',
					how,
					v.items,
				);
				r.floor = coarseFloor(v.items, v.rateLimit, v.windowMs);
				r.goals = { no429: true };
				r.notes.push(
					`${v.rateLimit} requests per ${v.windowMs / 1000} s window, reset header in whole seconds (rounded up, as the sandbox does by default); floor: windows x (window + 1 s)`,
				);
				log(`scenario ${r.id}: ${r.title}`);
				await createMany(world, r, {
					items: v.items,
					config: coarseConfig(s.variants, format),
					runs: v.runs,
				});
				scenarios.push(r);
			}
		}

		// Last: the node keeps the pace it learnt from a headerless server for this key, and would start the next
		// scenario's first window with it.
		if (wanted('headerless')) {
			const v = s.variants.headerless;
			const r = scenario(
				world,
				'6',
				'headerless',
				`Lead > Create (${v.items} items, one execution), server with no rate-limit headers`,
				'package',
				how,
				v.items,
			);
			r.floor = rateLimitFloor(v.items, v.rateLimit, v.windowMs);
			r.goals = { failuresOnly: true };
			r.notes.push(
				`no X-RateLimit-* headers; the server allows ${v.rateLimit} per ${v.windowMs / 1000} s (429s keep Retry-After), the node starts from the documented 100 per minute and learns from 429s, so 429s are expected; target: 0 failed items, none created twice`,
			);
			log(`scenario ${r.id}: ${r.title}`);
			await createMany(world, r, { items: v.items, config: headerlessConfig(s.variants) });
			scenarios.push(r);
		}
		// Last of all: it restarts n8n with the durable scheduler (test/bench/drain.ts).
		if (wanted('drain')) scenarios.push(await drainScenario({ world, prepare, scenario, log }));
		// Where the time goes when a package scenario is slow: before its first request, or in the pacing.
		for (const r of scenarios.filter((x) => x.key === 'create' || x.key === 'get')) {
			const before = median(
				r.runs.map((run) => run.firstRequestMs).filter((v): v is number => v !== undefined),
			);
			if (before > 0.1 * r.floor.floorMs) {
				r.notes.push(
					`n8n took ${(before / 1000).toFixed(2)} s (median) from the call to the first request: RoutingNode prepares every ` +
						'input item (evaluating its expressions) before it sends anything; see test/bench/README.md',
				);
			}
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
			targets: [
				...evaluate(scenarios.filter((x) => x.key !== 'drain')),
				...drainTargets(scenarios),
			],
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
