/**
 * The per-item scenarios: Lead > Create (2) and Lead > Get (3), one request per input item in one
 * execution, and Create against server variants (6 headerless, 7a/7b whole-second resets).
 */
import { randomBytes } from 'node:crypto';

import type { SandboxConfig } from '../sandbox/server';
import type { Scenario, ScenarioResult } from './figures';
import { median, rateLimitFloor, sleep } from './measure';
import {
	afterFirstMs,
	beginMemory,
	callCase,
	debugLog,
	endMemory,
	firstError,
	firstRequestMs,
	isErrorItem,
	packageScenario,
	prepare,
	trafficFigures,
} from './runs';
import { coarseConfig, coarseFloor, COARSE_FORMATS, headerlessConfig } from './variants';
import { log, type World } from './world';

async function createMany(
	world: World,
	result: ScenarioResult,
	variant?: { items: number; config: Partial<SandboxConfig>; runs?: number; learning?: boolean },
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
		const learnt = variant?.learning
			? afterFirstWindow(entries, variant.config.windowMs ?? sizes.windowMs)
			: undefined;
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
			afterFirstWindow: learnt,
			error: call.error ?? firstError(call.items),
		});
		log(
			`  run ${run}: ${traffic.requests} requests, ${traffic.rateLimited} x 429, ${ok.length} created (+${call.items.length - ok.length} failed), ${(call.wallMs / 1000).toFixed(2)} s` +
				(learnt
					? `; after the first window ${learnt.rateLimited} x 429 of ${learnt.requests}`
					: ''),
		);
	}
}

/** Requests sent once the window of the first 429 was over, and the 429s among them. */
function afterFirstWindow(
	entries: Array<{ time: number; status: number | null }>,
	windowMs: number,
): { requests: number; rateLimited: number } {
	const first = entries.find((e) => e.status === 429);
	const after = first ? entries.filter((e) => e.time >= first.time + windowMs) : entries;
	return { requests: after.length, rateLimited: after.filter((e) => e.status === 429).length };
}

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

/** Where the time goes when a package scenario is slow: before its first request, or in the pacing. */
function firstRequestNote(r: ScenarioResult): void {
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

export const create: Scenario = {
	key: 'create',
	async run(world) {
		const items = world.sizes.items;
		const r = packageScenario(
			world,
			'2',
			'create',
			`Lead > Create (${items} items, one execution)`,
			items,
		);
		r.goals = { strict: true };
		await createMany(world, r);
		firstRequestNote(r);
		return [r];
	},
};

export const get: Scenario = {
	key: 'get',
	async run(world) {
		const items = world.sizes.items;
		const r = packageScenario(
			world,
			'3',
			'get',
			`Lead > Get (${items} items, one execution)`,
			items,
		);
		await getMany(world, r);
		firstRequestNote(r);
		return [r];
	},
};

export const coarse: Scenario = {
	key: 'coarse',
	async run(world) {
		const s = world.sizes;
		const results: ScenarioResult[] = [];
		const v = s.variants.coarse;
		for (const [suffix, format] of COARSE_FORMATS.map((f, i) => [`7${'ab'[i]}`, f] as const)) {
			const r = packageScenario(
				world,
				suffix,
				'coarse',
				`Lead > Create (${v.items} items, one execution), X-RateLimit-Reset ${format === 'epoch-s' ? 'in epoch seconds' : 'as an HTTP date'}`,
				v.items,
			);
			r.floor = coarseFloor(v.items, v.rateLimit, v.windowMs);
			r.goals = { no429: true };
			r.notes.push(
				`${v.rateLimit} requests per ${v.windowMs / 1000} s window, reset header in whole seconds (rounded up, as the sandbox does by default); floor: windows x (window + 1 s)`,
			);
			await createMany(world, r, {
				items: v.items,
				config: coarseConfig(s.variants, format),
				runs: v.runs,
			});
			results.push(r);
		}
		return results;
	},
};

/**
 * Last of the action scenarios: the node keeps the pace it learnt from a headerless server for this key,
 * and would start the next scenario's first window with it.
 */
export const headerless: Scenario = {
	key: 'headerless',
	async run(world) {
		const s = world.sizes;
		const v = s.variants.headerless;
		const r = packageScenario(
			world,
			'6',
			'headerless',
			`Lead > Create (${v.items} items, one execution), server with no rate-limit headers`,
			v.items,
		);
		r.floor = rateLimitFloor(v.items, v.rateLimit, v.windowMs);
		r.goals = { failuresOnly: true, learnt429: 0.05 };
		r.notes.push(
			`no X-RateLimit-* headers; the server allows ${v.rateLimit} per ${v.windowMs / 1000} s (429s keep Retry-After), the node starts from the documented 100 per minute and learns from 429s, so 429s are expected; target: 0 failed items, none created twice`,
		);
		await createMany(world, r, {
			items: v.items,
			config: headerlessConfig(s.variants),
			learning: true,
		});
		return [r];
	},
};
