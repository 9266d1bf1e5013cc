/**
 * Scenario 11v, part of `--only upsert`: Lead > Create or Update at volume, 5,000 items against 20,000 stored
 * leads (--quick: 1,000 against 4,000) in ONE execution, in n8n's engine in a process of its own (the volume
 * scenario's worker, volume-worker.ts), against a sandbox in the bench's process with a rate limit no run
 * reaches (so the pacing does not hide the rest). Items as scenario 11: a quarter equal to their lead, a
 * quarter with another title, half new profiles. Half the stored leads carry the spellings real data has
 * (no scheme, no www. with a trailing slash, uk., m.), while the items carry https://www.linkedin.com/in/...,
 * so the identity rule's index is built and matched on them.
 *
 * Prints the heap (the largest growth over the start, read after full collections every second, and what is
 * left once the execution is over, its output still referenced) and, from a run of its own without those
 * collections, the wall time; beside each n8n's no-op node over the same items (n8n's engine's own cost); the
 * lookups (GET /leads) against ceil(M / 100) + 1 + 2 and the writes against the items that change.
 */
import type { INodeParameters } from 'n8n-workflow';

import { startSandbox, type Sandbox } from '../sandbox/server';
import { fmt, type ScenarioResult, type Target } from './figures';
import { inWorker } from './volume';
import type { VolumeFigures, VolumeJob } from './volume-worker';
import { log, type Sizes } from './world';

export const UPSERT_VOLUME_ID = '11v';
const KEY = 'bench-upsert-volume-key-3c9d';
/** A limit no run reaches: the pacing never waits, so the figures are the node's and n8n's own. */
const LIMIT = 1_000_000;
const WINDOW_MS = 1000;
/** The sandbox's largest page (its default maxPerPage). */
const SERVED_PAGE = 100;
const MB = 1024 * 1024;
/**
 * The heap's target: the "about 50 MB" for this run (measured before profile identity: 47 MB, after
 * it 50 MB) with half of it again for garbage-collection timing and other work on the machine. Tighter than
 * the volume scenario's 100 MB for up to 10,000 items, which a second copy of the 20,000 leads would still
 * pass; what the identity rule keeps per lead must be a key, not a copy.
 */
const HEAP_TARGET_MB = 75;

const SIZES = { full: { items: 5000, leads: 20_000 }, quick: { items: 1000, leads: 4000 } };

/** Of the stored leads, by position modulo 8: the spelling their linkedin_url is stored in. */
const SPELLINGS: Array<(handle: string) => string> = [
	(h) => `https://www.linkedin.com/in/${h}`,
	(h) => `https://www.linkedin.com/in/${h}`,
	(h) => `https://www.linkedin.com/in/${h}`,
	(h) => `https://www.linkedin.com/in/${h}`,
	(h) => `www.linkedin.com/in/${h}`, // a CSV import: no scheme
	(h) => `linkedin.com/in/${h}/`, // a browser extension: no scheme, no www., a trailing slash
	(h) => `https://uk.linkedin.com/in/${h}`, // a country host
	(h) => `https://m.linkedin.com/in/${h}/`, // the mobile site
];

/** The person an address names, by its handle, for counting the profiles held twice (not the node's rule). */
const handleOf = (url: string) => /linkedin\.com\/in\/([^/?#]+)/i.exec(url)?.[1]?.toLowerCase();

/**
 * The sandbox's seeded leads with unique handles, half of them in real data's spellings. Returns the
 * profile addresses as a CRM holds them (https://www.linkedin.com/in/<handle>), in store order.
 */
function storeLeads(sandbox: Sandbox, leads: number): string[] {
	sandbox.reset({ leads, campaigns: 0, messages: 0, seed: 1 });
	const seen = new Set<string>();
	const canonical: string[] = [];
	let i = 0;
	for (const lead of [...sandbox.store.leads.values()]) {
		let handle = handleOf(lead.linkedin_url) ?? `bench-lead-${i}`;
		// The seed's handles are random: two leads of one handle would be one person held twice.
		if (seen.has(handle)) handle = `${handle}-${i}`;
		seen.add(handle);
		canonical.push(`https://www.linkedin.com/in/${handle}`);
		sandbox.store.leads.set(lead.id, { ...lead, linkedin_url: SPELLINGS[i % 8](handle) });
		i++;
	}
	return canonical;
}

interface Item {
	url: string;
	first: string;
	last: string;
	company: string;
	title: string;
}

/**
 * A quarter equal to their lead, a quarter with another title, half new profiles. The stored ones are
 * spread over the list and over every spelling (the j-th is lead j * stride + j mod 8).
 */
function itemsFor(sandbox: Sandbox, canonical: string[], n: number): Item[] {
	const leads = [...sandbox.store.leads.values()];
	const stride = Math.floor(leads.length / (n / 2));
	if (stride < SPELLINGS.length) throw new Error('upsert at volume: fewer than 4 leads per item');
	const existing = Array.from({ length: n / 2 }, (_, j) => {
		const at = j * stride + (j % SPELLINGS.length);
		const lead = leads[at];
		return {
			url: canonical[at],
			first: lead.first_name,
			last: lead.last_name,
			company: lead.company,
			title: j < n / 4 ? lead.title : `${lead.title} (bench)`,
		};
	});
	const created = Array.from({ length: n / 2 }, (_, i) => ({
		url: `https://www.linkedin.com/in/bench-upsert-${i}-new`,
		first: `Upsert${i}`,
		last: 'Benchmark',
		company: 'Bench Ltd',
		title: 'Engineer',
	}));
	return [...existing, ...created];
}

const PARAMETERS: INodeParameters = {
	resource: 'lead',
	operation: 'upsert',
	linkedinUrl: '={{ $json.url }}',
	// The no-op reads this one (one expression per item; Create or Update evaluates five).
	firstName: '={{ $json.first }}',
	lastName: '={{ $json.last }}',
	company: '={{ $json.company }}',
	title: '={{ $json.title }}',
};

interface UpsertRun {
	figures: VolumeFigures;
	lookups: number;
	writes: number;
	requests: number;
	rateLimited: number;
	/** Profiles of the items held by other than exactly one lead afterwards. */
	notOnce: number;
}

/** One Create or Update execution in a fresh worker, against the stored leads as seeded. */
async function upsertRun(
	sandbox: Sandbox,
	leads: number,
	items: Item[],
	heap: boolean,
): Promise<UpsertRun> {
	storeLeads(sandbox, leads);
	const job: VolumeJob = {
		baseUrl: sandbox.url,
		apiKey: KEY,
		items: items.length,
		inputs: items as unknown as VolumeJob['inputs'],
		parameters: PARAMETERS,
		heap,
	};
	const figures = await inWorker(job);
	const entries = sandbox.requests();
	const perHandle = new Map<string | undefined, number>();
	for (const lead of sandbox.store.leads.values()) {
		const handle = handleOf(lead.linkedin_url);
		perHandle.set(handle, (perHandle.get(handle) ?? 0) + 1);
	}
	return {
		figures,
		lookups: entries.filter((e) => e.method === 'GET' && e.path === '/api/v1/leads').length,
		writes: entries.filter((e) => e.method === 'POST' || e.method === 'PATCH').length,
		requests: entries.length,
		rateLimited: entries.filter((e) => e.status === 429).length,
		notOnce: items.filter((item) => perHandle.get(handleOf(item.url)) !== 1).length,
	};
}

/** The figures the target reads (kept on the result). */
export interface UpsertVolumeFigures {
	heapPeak: number;
	heapRetained: number;
	noOpHeapPeak: number;
	lookups: number;
	lookupBound: number;
	writes: number;
	changing: number;
	heapTargetMb: number;
}

export async function upsertAtVolume(
	sizes: Pick<Sizes, 'mode'>,
): Promise<ScenarioResult & { upsertVolume: UpsertVolumeFigures }> {
	const { items: n, leads: m } = SIZES[sizes.mode];
	const lookupBound = Math.ceil(m / SERVED_PAGE) + 1 + 2;
	const changing = n / 4 + n / 2;
	const sandbox = await startSandbox({
		apiKeys: [KEY],
		seed: { leads: 0, campaigns: 0, messages: 0 },
		rateLimit: LIMIT,
		windowMs: WINDOW_MS,
		resetFormat: 'epoch-ms',
	});
	try {
		const items = itemsFor(sandbox, storeLeads(sandbox, m), n);
		const noOpJob: VolumeJob = {
			baseUrl: sandbox.url,
			apiKey: KEY,
			items: n,
			inputs: items as unknown as VolumeJob['inputs'],
			parameters: PARAMETERS,
			node: 'testNoOp',
		};
		log(`upsert at volume: n8n's no-op over the same ${fmt(n)} items`);
		const noOpWall = await inWorker(noOpJob);
		const noOpHeap = await inWorker({ ...noOpJob, heap: true });
		log(`upsert at volume: ${fmt(n)} items against ${fmt(m)} leads, for the heap`);
		const heap = await upsertRun(sandbox, m, items, true);
		log(`upsert at volume: the same, for the wall time`);
		const wall = await upsertRun(sandbox, m, items, false);

		const runs = [heap, wall];
		const outcomes = (run: UpsertRun) =>
			Object.entries(run.figures.outcomes)
				.map(([k, v]) => `${k} ${fmt(v)}`)
				.join(', ');
		const expected = { unchanged: n / 4, updated: n / 4, created: n / 2 };
		const right = (run: UpsertRun) =>
			run.figures.failed === 0 &&
			run.figures.returned === n &&
			run.notOnce === 0 &&
			run.lookups <= lookupBound &&
			run.writes === changing &&
			Object.entries(expected).every(([k, v]) => run.figures.outcomes[k] === v);
		const result: ScenarioResult & { upsertVolume: UpsertVolumeFigures } = {
			id: UPSERT_VOLUME_ID,
			key: 'upsert',
			title: `Lead > Create or Update, ${fmt(n)} items against ${fmt(m)} leads in one execution, n8n's engine`,
			subject: 'package',
			how: "n8n's engine in a process of its own, a limit no run reaches; beside it a no-op node over the same items",
			requestsMin: lookupBound + changing,
			// No floor: the limit is out of reach (the report prints none).
			floor: { windows: 0, windowMs: WINDOW_MS, floorMs: 0, strictMs: 0 },
			runs: runs.map((run, i) => ({
				run: i + 1,
				requests: run.requests,
				rateLimited: run.rateLimited,
				maxConcurrent: 0,
				failedExecution: false,
				failedItems: run.figures.failed,
				returned: run.figures.returned,
				distinct: run.figures.returned,
				expected: n,
				complete: right(run),
				duplicatesCreated: run.notOnce,
				// The heap run's collections slow it down: only the other run's wall time counts.
				wallMs: run === wall ? run.figures.wallMs : null,
				spanMs: run.figures.wallMs,
				error: run.figures.firstError,
			})),
			notes: [],
			upsertVolume: {
				heapPeak: heap.figures.heapGrowth,
				heapRetained: heap.figures.retained,
				noOpHeapPeak: noOpHeap.heapGrowth,
				lookups: Math.max(heap.lookups, wall.lookups),
				lookupBound,
				writes: Math.max(heap.writes, wall.writes),
				changing,
				heapTargetMb: HEAP_TARGET_MB,
			},
		};
		const mb = (bytes: number) => `${(bytes / MB).toFixed(1)} MB`;
		const perLead = (heap.figures.heapGrowth - noOpHeap.heapGrowth) / m;
		const lines = [
			`${fmt(n)} items against ${fmt(m)} leads (half stored without a scheme or under uk./m.), one execution: ` +
				`heap peak ${mb(heap.figures.heapGrowth)}, retained after it ${mb(heap.figures.retained)} ` +
				`(n8n's no-op over the same items: peak ${mb(noOpHeap.heapGrowth)}, retained ${mb(noOpHeap.retained)}; ` +
				`at most ${fmt(Math.round(perLead))} bytes per stored lead over the no-op, everything included); ` +
				`wall ${(wall.figures.wallMs / 1000).toFixed(1)} s, CPU ${(wall.figures.cpuMs / 1000).toFixed(1)} s ` +
				`(no-op ${(noOpWall.wallMs / 1000).toFixed(1)} s, CPU ${(noOpWall.cpuMs / 1000).toFixed(1)} s; ` +
				`the sandbox's CPU is the bench process's)`,
			...runs.map(
				(run, i) =>
					`${i ? 'wall' : 'heap'} run: ${run.lookups} lookups (bound ${lookupBound}), ${fmt(run.writes)} writes ` +
					`(changed items ${fmt(changing)}), ${fmt(run.requests)} requests, ${run.rateLimited} 429s, ` +
					`${run.figures.failed} failed, outcomes ${outcomes(run)}, ${run.notOnce} profiles not exactly once`,
			),
		];
		for (const line of lines) log(`  ${line}`);
		result.notes.push(...lines);
		return result;
	} finally {
		await sandbox.stop();
	}
}

/** The target line: every figure right in both runs, and the heap peak within HEAP_TARGET_MB. */
export function upsertVolumeTarget(
	result: ScenarioResult & { upsertVolume?: UpsertVolumeFigures },
): Target {
	const v = result.upsertVolume!;
	const heapMb = v.heapPeak / MB;
	return {
		scenario: result.id,
		target:
			`every item right (${result.runs[0]?.expected ?? 0} ok, each profile once), lookups within ${v.lookupBound}, ` +
			`writes = changed items, heap peak at most ${v.heapTargetMb} MB`,
		met: result.runs.every((run) => run.complete) && heapMb <= v.heapTargetMb,
		detail:
			`${v.lookups} lookups, ${fmt(v.writes)} writes of ${fmt(v.changing)}, heap peak ${heapMb.toFixed(1)} MB ` +
			`(no-op ${(v.noOpHeapPeak / MB).toFixed(1)} MB), retained ${(v.heapRetained / MB).toFixed(1)} MB` +
			(result.runs.every((run) => run.complete)
				? ''
				: `; ${result.runs.map((run) => run.error ?? 'incomplete').join('; ')}`),
	};
}
