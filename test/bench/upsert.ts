/**
 * Scenario 11 (`--only upsert`): Lead > Create or Update, N items against M existing leads (500 against
 * 10,000; --quick 100 against 2,000): a quarter equal to their lead, a quarter with another title, half new
 * profiles. Then the same items again: nothing left to write. Prints the lookups (GET /leads) against the
 * bound ceil(M / P) + 1 + 2 of a server whose search does not find profiles (the sandbox's, names only) and
 * the writes against the items that change. The other search behaviours are proven by the engine tests
 * (test/nodes/OutreachAutomation/resources/leadUpsert.test.ts); here one credential keeps what it learnt.
 * Then 11v (upsert-volume.ts): 5,000 items against 20,000 leads in one execution in n8n's engine, its heap
 * and wall beside n8n's no-op node over the same items.
 */
import type { RequestLogEntry } from '../sandbox/server';
import type { Scenario, ScenarioResult, Target } from './figures';
import { sleep } from './measure';
import { UPSERT_VOLUME_ID, upsertAtVolume, upsertVolumeTarget } from './upsert-volume';
import {
	callCase,
	debugLog,
	firstError,
	isErrorItem,
	packageScenario,
	prepare,
	trafficFigures,
} from './runs';
import { log, type World } from './world';

/** The sandbox's largest page. */
const SERVED_PAGE = 100;

const isLookup = (e: RequestLogEntry) => e.method === 'GET' && e.path === '/api/v1/leads';
const isWrite = (e: RequestLogEntry) => e.method === 'POST' || e.method === 'PATCH';

export const upsert: Scenario = {
	key: 'upsert',
	async run(world: World) {
		const { sizes, sandbox } = world;
		const n = sizes.items;
		const m = sizes.leads;
		// Of a run against `leads` leads.
		const boundOf = (leads: number) => Math.ceil(leads / SERVED_PAGE) + 1 + 2;
		const changing = n / 4 + n / 2;
		const result: ScenarioResult = packageScenario(
			world,
			'11',
			'upsert',
			`Lead > Create or Update, ${n} items against ${m.toLocaleString('en-US')} leads, then the same ${n} again`,
			boundOf(m) + changing,
		);
		result.goals = { requestsMax: boundOf(m + n / 2) + changing };
		await prepare(world, { leads: m });
		const existing = [...sandbox.store.leads.values()].slice(0, n / 2);
		const items = [
			...existing.map((lead, i) => ({
				url: lead.linkedin_url,
				first: lead.first_name,
				last: lead.last_name,
				company: lead.company,
				title: i < n / 4 ? lead.title : `${lead.title} (bench)`,
			})),
			...Array.from({ length: n / 2 }, (_, i) => ({
				url: `https://www.linkedin.com/in/bench-upsert-${i}-new`,
				first: `Upsert${i}`,
				last: 'Benchmark',
				company: 'Bench Ltd',
				title: 'Engineer',
			})),
		];
		for (let run = 1; run <= 2; run++) {
			const before = sandbox.requests().length;
			const leadsBefore = sandbox.store.leads.size;
			const lookupBound = boundOf(leadsBefore);
			const call = await callCase(world, world.cases.upsert, { items });
			const entries = sandbox.requests().slice(before);
			debugLog(world, call, entries);
			const lookups = entries.filter(isLookup).length;
			const writes = entries.filter(isWrite).length;
			const expectedWrites = run === 1 ? changing : 0;
			const ok = call.items.filter((item) => !isErrorItem(item));
			const outcomes = new Map<string, number>();
			for (const item of ok)
				outcomes.set(String(item.outcome), (outcomes.get(String(item.outcome)) ?? 0) + 1);
			const perProfile = new Map<string, number>();
			for (const lead of sandbox.store.leads.values())
				perProfile.set(lead.linkedin_url, (perProfile.get(lead.linkedin_url) ?? 0) + 1);
			const duplicates = items.filter((item) => perProfile.get(item.url) !== 1).length;
			result.runs.push({
				run,
				...trafficFigures(sandbox, entries),
				failedExecution: Boolean(call.error),
				failedItems: call.items.length - ok.length,
				returned: ok.length,
				distinct: new Set(ok.map((item) => String(item.id))).size,
				expected: n,
				complete:
					!call.error &&
					ok.length === n &&
					duplicates === 0 &&
					lookups <= lookupBound &&
					writes === expectedWrites,
				duplicatesCreated: duplicates,
				wallMs: call.wallMs,
				spanMs: 0,
				error: call.error ?? firstError(call.items),
			});
			const line =
				`run ${run} against ${leadsBefore} leads: ${lookups} lookups (bound ${lookupBound}), ${writes} writes (changed items ${expectedWrites}), ` +
				`outcomes ${[...outcomes].map(([k, v]) => `${k} ${v}`).join(', ')}, ${duplicates} profiles not exactly once, ` +
				`${(call.wallMs / 1000).toFixed(2)} s`;
			result.notes.push(line);
			log(`  ${line}`);
			await sleep(sizes.windowMs + 250);
		}
		return [result, await upsertAtVolume(sizes)];
	},
	targets(results): Target[] {
		return results.flatMap((r) =>
			r.id === UPSERT_VOLUME_ID
				? [upsertVolumeTarget(r)]
				: r.runs.map((run) => ({
						scenario: `${r.id} run ${run.run}`,
						target: 'lookups within the bound, writes = changed items, each profile once',
						met: run.complete,
						detail: r.notes[run.run - 1] ?? run.error ?? 'no figures',
					})),
		);
	},
};
