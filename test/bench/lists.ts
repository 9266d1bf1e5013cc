/**
 * The list scenarios: Lead > Get Many, Return All over every lead (1, 1b; 8 from a server allowing 1,000
 * per page), and n8n's HTTP Request node doing the same job (5a-5e).
 */
import { performance } from 'node:perf_hooks';

import type { Sandbox, SandboxConfig } from '../sandbox/server';
import { fmt, scenario, type Scenario, type ScenarioResult } from './figures';
import { sleep } from './measure';
import {
	afterFirstMs,
	beginMemory,
	callCase,
	debugLog,
	endMemory,
	firstRequestMs,
	packageScenario,
	prepare,
	trafficFigures,
	WEBHOOK,
} from './runs';
import { bigPagesConfig } from './variants';
import type { BenchCase } from './workflows';
import { log, PER_PAGE, type Sizes, type World } from './world';

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

/**
 * The fewest requests that prove a list complete without trusting meta.total (a server may send it low, high,
 * as text or not at all): every page, and the empty one after a last full page.
 */
function listPages(s: Sizes): number {
	return Math.ceil(s.leads / PER_PAGE) + (s.leads % PER_PAGE === 0 ? 1 : 0);
}

/** Another workflow or tool on the same API key: a tenth of the window is gone when the job starts. */
function sharedWindow(s: Sizes): { spent: number; sharedNote: string } {
	const spent = Math.max(1, Math.round(s.rateLimit / 10));
	const sharedNote =
		`${spent} requests of the window are spent just before the run by another client on the same key; ` +
		'wall time counts from them, and the floor is computed for them plus the minimum';
	return { spent, sharedNote };
}

/**
 * Before getAll: the node remembers the page size each server served, and this sandbox (one origin and key
 * for the node) serves 100 per page to every other scenario.
 */
export const bigPages: Scenario = {
	key: 'bigPages',
	async run(world) {
		const s = world.sizes;
		const { cases } = world;
		const v = s.variants.bigPages;
		const r = packageScenario(
			world,
			'8',
			'bigPages',
			`Lead > Get Many, Return All (${fmt(v.leads)} leads), server allowing ${fmt(v.maxPerPage)} per page`,
			Math.ceil(v.leads / v.maxPerPage),
		);
		r.goals = { requestsMax: r.requestsMin + 1 };
		r.notes.push(
			`sandbox maxPerPage ${v.maxPerPage}; target ceil(N / ${v.maxPerPage}) + at most 1 requests; the first run learns the size, later runs ask it at once`,
		);
		await listAll(world, r, cases.getAll, 0, {
			leads: v.leads,
			config: bigPagesConfig(s.variants),
		});
		return [r];
	},
};

export const getAll: Scenario = {
	key: 'getAll',
	async run(world) {
		const s = world.sizes;
		const { cases } = world;
		const pages = listPages(s);
		const { spent, sharedNote } = sharedWindow(s);
		const title = `Lead > Get Many, Return All (${fmt(s.leads)} leads)`;
		const r = packageScenario(world, '1', 'getAll', title, pages);
		await listAll(world, r, cases.getAll);
		const shared = packageScenario(
			world,
			'1b',
			'getAll',
			`${title}, ${spent} of the window already spent`,
			pages,
			pages + spent,
		);
		shared.notes.push(sharedNote);
		await listAll(world, shared, cases.getAll, spent);
		return [r, shared];
	},
};

export const http: Scenario = {
	key: 'http',
	async run(world) {
		const s = world.sizes;
		const { cases } = world;
		const how = WEBHOOK;
		const pages = listPages(s);
		const { spent, sharedNote } = sharedWindow(s);
		const results: ScenarioResult[] = [];
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
			results.push(r);
		}
		results
			.find((x) => x.id === '5a')
			?.notes.push(
				'completion expression $response.body.data.length < 100 (a short page ends it, so the empty page after the last full one is asked for too). On a 429 answer `data` is missing: the expression throws, n8n evaluates it to null and pagination ends without an error, dropping that page and every page after it (5d); Retry On Fail never sees an error to retry (5b)',
			);
		return results;
	},
};
