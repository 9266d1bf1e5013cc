/**
 * One run of a scenario, measured: waiting out the last rate window and resetting the sandbox, calling the
 * workflow's webhook, and reading the traffic, timings and memory of the run.
 */
import { performance } from 'node:perf_hooks';

import type { RequestLogEntry, Sandbox, SandboxConfig } from '../sandbox/server';
import { scenario, type ScenarioKey, type ScenarioResult } from './figures';
import { peakRssKb, resetPeak, rssKb, sleep } from './measure';
import type { BenchCase } from './workflows';
import { log, type World } from './world';

/** How the action scenarios run their workflow. */
export const WEBHOOK = 'n8n webhook';

/** A scenario of this package's node, run through a webhook, announced in the bench's log. */
export function packageScenario(
	world: World,
	id: string,
	key: ScenarioKey,
	title: string,
	requestsMin: number,
	floorRequests = requestsMin,
): ScenarioResult {
	const result = scenario(world, id, key, title, 'package', WEBHOOK, requestsMin, floorRequests);
	log(`scenario ${result.id}: ${result.title}`);
	return result;
}

export type Json = Record<string, unknown>;

/** Waits until the rate window of the last scenario is over (on both sides), then resets the sandbox. */
export async function prepare(
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

export function beginMemory(world: World): number | undefined {
	const pid = world.n8n.pid;
	if (pid === undefined) return undefined;
	if (world.peakResetSupported) resetPeak(pid);
	return rssKb(pid);
}

export function endMemory(world: World): number | undefined {
	return world.n8n.pid === undefined ? undefined : peakRssKb(world.n8n.pid);
}

export function trafficFigures(sandbox: Sandbox, entries: RequestLogEntry[] = sandbox.requests()) {
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
export function firstRequestMs(call: CallResult, entries: RequestLogEntry[]): number | undefined {
	return entries.length ? Math.min(...entries.map((e) => e.time)) - call.calledAt : undefined;
}

/** Ms from the first request the sandbox received to the complete answer. */
export function afterFirstMs(call: CallResult, entries: RequestLogEntry[]): number | undefined {
	return entries.length ? call.answeredAt - Math.min(...entries.map((e) => e.time)) : undefined;
}

export interface CallResult {
	/** Epoch ms when the webhook was called and when its answer was complete. */
	calledAt: number;
	answeredAt: number;
	status: number;
	items: Json[];
	error?: string;
	wallMs: number;
}

export async function callCase(
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
export function debugLog(world: World, call: CallResult, entries = world.sandbox.requests()): void {
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

export const isErrorItem = (item: Json) =>
	item !== null && typeof item === 'object' && 'error' in item && !('id' in item);

export function firstError(items: Json[]): string | undefined {
	const failed = items.find(isErrorItem);
	if (!failed) return undefined;
	const error = failed.error;
	return typeof error === 'string' ? error : JSON.stringify(error).slice(0, 300);
}
