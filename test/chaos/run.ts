/**
 * The chaos run: every operation of the action node (and the trigger's poll), several executions at
 * once with several items each, inside n8n's engine, against a sandbox injecting 5xx, 429 bursts,
 * dropped connections, malformed bodies, `success: false` on 200, latency and list churn. Seeded:
 * the same flags give the same operations (the faults then depend only on the order requests arrive).
 *
 *   npm run chaos -- --operations 10000 --seed 1   (test/chaos/cli.ts)
 *
 * Prints: operations attempted, succeeded, failed with a clear error, failed unclearly, duplicate
 * creates/sends, lost and duplicated Return All items, uncaught errors and TypeErrors.
 */
import type { IDataObject, INodeExecutionData, INodeParameters } from 'n8n-workflow';

// The engine harness first: it loads the nodes, whose modules the transport imports below are part of.
import { runNode, TriggerHarness } from '../engine/harness';
import { resetPageSizes } from '../../nodes/OutreachAutomation/transport/pages';
import { resetRateLimitState } from '../../nodes/OutreachAutomation/transport/pacing';
import { Random } from '../sandbox/random';
import type { SandboxConfig } from '../sandbox/schemas';
import { startSandbox, type Sandbox } from '../sandbox/server';
import { duplicateProfiles, upsertOp } from './upsert';

export interface ChaosOptions {
	/** Operations (input items) to run in all. */
	operations: number;
	/** Seeds the choice of operations, items and ids, and the sandbox's faults and churn. */
	seed: number;
	/** Executions running at once. */
	concurrency?: number;
	/** Input items per execution, at most. */
	itemsPerRun?: number;
	/** Sandbox knobs over the chaos defaults below. */
	config?: Partial<SandboxConfig>;
	/**
	 * Per round, a lead leaving before a reader's position, then one leaving after it and one arriving
	 * at the front (the two list reads after): the shift that made Return All skip a lead. Default on.
	 */
	placedChurn?: boolean;
	/** Called after each round with the figures so far. */
	progress?: (figures: ChaosFigures) => void;
}

export interface ChaosFigures {
	operations: number;
	succeeded: number;
	failedClearly: number;
	/** Of those, items whose list read stopped because the list kept changing under it. */
	listChanging: number;
	/** Failed items whose message is not one of ours (a raw exception, an empty message...). */
	failedUnclearly: number;
	duplicateCreates: number;
	/** Create or Update: profiles held by more than one lead after re-runs of half-failed batches. */
	duplicateProfiles: number;
	returnAllRuns: number;
	lostItems: number;
	duplicatedItems: number;
	triggerPolls: number;
	triggerDuplicates: number;
	uncaught: number;
	typeErrors: number;
	requests: number;
	faultsInjected: number;
	rateLimited: number;
	churnEvents: number;
	/** Up to 5 examples of unclear or uncaught failures, to read. */
	examples: string[];
}

/**
 * The chaos profile's faults (5xx, 429 bursts, drops, 429s after the operation ran) plus malformed
 * bodies, `success: false` on 200, latency and churn. Errors are problem+json, so a 429 that comes
 * after the operation ran looks like a gateway's (the node does not re-send a create after it and
 * tells the user to check); the API's own envelope 429 is re-sent by design, which a late 429 in
 * that form would turn into a duplicate no client could avoid.
 */
export const CHAOS_CONFIG: Partial<SandboxConfig> = {
	profile: 'chaos',
	errorStyle: 'problem-json',
	burst429Rate: 0.02,
	after429Rate: 0.02,
	malformedRate: 0.02,
	falseSuccessRate: 0.02,
	latencyMs: 3,
	rateLimit: 600,
	windowMs: 1000,
	churn: { everyNthListRequest: 3, remove: 1, insert: 1, changeStatus: 1 },
};

const KEY = 'chaos-secret-key-7f3a';
const rl = (value: string) => ({ __rl: true, mode: 'id', value });

/** Messages that are the node's own (they say what happened and what to do), not raw exceptions. */
const CLEAR =
	/Outreach Automation|The service|kept changing|rejected the request|Not sent: item|leads already have this|was not found|Nothing was changed|rate limit|Rate limit|Could not reach|not an Outreach Automation API response|check before running it again|reported an error|sent no .* data|unavailable|refused/;
const TYPE_ERROR =
	/TypeError|Cannot read propert|is not a function|is not iterable|undefined is not|Maximum call stack/;

type Op = {
	name: string;
	/** Builds the parameters and input items of one execution of `count` items. */
	build(
		count: number,
		slot: number,
	): { parameters: INodeParameters; inputs: IDataObject[]; deletes?: string[] };
	returnAll?: 'leads' | 'campaigns' | 'messages';
};

export async function runChaos(options: ChaosOptions): Promise<ChaosFigures> {
	const concurrency = options.concurrency ?? 4;
	const itemsPerRun = options.itemsPerRun ?? 8;
	const random = new Random(options.seed);
	const pick = <T>(list: T[]): T => list[Math.floor(random.next() * list.length)];
	const sandbox: Sandbox = await startSandbox({
		apiKeys: [KEY],
		seed: { leads: 300, campaigns: 6, messages: 1, seed: options.seed },
		faultSeed: options.seed,
		...CHAOS_CONFIG,
		...options.config,
	} as Parameters<typeof startSandbox>[0]);
	resetRateLimitState();
	resetPageSizes();
	const creds = { baseUrl: sandbox.url, apiKey: KEY };
	let unique = 0;
	const tag = () => `${options.seed}-${++unique}`;
	const leadIds = () => [...sandbox.store.leads.keys()];
	const campaignIds = () => [...sandbox.store.campaigns.keys()];
	const messageIds = () => sandbox.store.findMessages({}).map((m) => String(m.id));
	const anyOf = (ids: string[]) => (ids.length ? pick(ids) : 'ld_missing');

	const perItem = (count: number, make: () => IDataObject) =>
		Array.from({ length: count }, () => make());
	const ops: Op[] = [
		{
			name: 'lead.create',
			build: (n) => ({
				parameters: {
					resource: 'lead',
					operation: 'create',
					firstName: '={{ $json.first }}',
					company: '={{ $json.company }}',
				},
				inputs: perItem(n, () => ({ first: `Chaos ${tag()}`, company: `Co ${tag()}` })),
			}),
		},
		{
			name: 'lead.get',
			build: (n) => ({
				parameters: { resource: 'lead', operation: 'get', leadId: rl('={{ $json.id }}') },
				inputs: perItem(n, () => ({ id: anyOf(leadIds()) })),
			}),
		},
		{
			name: 'lead.update',
			build: (n) => ({
				parameters: {
					resource: 'lead',
					operation: 'update',
					leadId: rl('={{ $json.id }}'),
					updateFields: { title: '={{ $json.title }}' },
				},
				inputs: perItem(n, () => ({ id: anyOf(leadIds()), title: `Title ${tag()}` })),
			}),
		},
		{
			name: 'lead.delete',
			build: (n) => {
				const inputs = perItem(Math.min(n, 2), () => ({ id: anyOf(leadIds()) }));
				return {
					parameters: { resource: 'lead', operation: 'delete', leadId: rl('={{ $json.id }}') },
					inputs,
					deletes: inputs.map((i) => String(i.id)),
				};
			},
		},
		{
			name: 'lead.getAll',
			returnAll: 'leads',
			build: () => ({
				parameters: { resource: 'lead', operation: 'getAll', returnAll: true },
				inputs: [{}],
			}),
		},
		{
			name: 'lead.getAll.limit',
			build: (n) => ({
				parameters: { resource: 'lead', operation: 'getAll', limit: 7 },
				inputs: perItem(n, () => ({})),
			}),
		},
		{
			name: 'campaign.create',
			build: (n) => ({
				parameters: {
					resource: 'campaign',
					operation: 'create',
					name: '={{ $json.name }}',
					campaignType: 'connection_message',
					stepsMode: 'json',
					stepsJson: '={{ JSON.stringify($json.steps) }}',
				},
				inputs: perItem(Math.min(n, 3), () => ({
					name: `Chaos campaign ${tag()}`,
					steps: [
						{ type: 'connection_request', note: 'Hi {{firstName}}' },
						{ type: 'message', delay_days: 2, body: `Follow-up ${tag()}` },
					],
				})),
			}),
		},
		...(['get', 'start', 'pause', 'getAnalytics'] as const).map(
			(operation): Op => ({
				name: `campaign.${operation}`,
				build: (n) => ({
					parameters: { resource: 'campaign', operation, campaignId: rl('={{ $json.id }}') },
					inputs: perItem(Math.min(n, 3), () => ({ id: anyOf(campaignIds()) })),
				}),
			}),
		),
		{
			name: 'campaign.getAll',
			returnAll: 'campaigns',
			build: () => ({
				parameters: { resource: 'campaign', operation: 'getAll', returnAll: true },
				inputs: [{}],
			}),
		},
		{
			name: 'message.send',
			build: (n) => ({
				parameters: {
					resource: 'message',
					operation: 'send',
					leadId: rl('={{ $json.lead }}'),
					body: '={{ $json.body }}',
				},
				inputs: perItem(n, () => ({ lead: anyOf(leadIds()), body: `Hello ${tag()}` })),
			}),
		},
		upsertOp(options.seed, random, tag),
		{
			name: 'message.get',
			build: (n) => ({
				parameters: { resource: 'message', operation: 'get', messageId: '={{ $json.id }}' },
				inputs: perItem(n, () => ({ id: anyOf(messageIds()) })),
			}),
		},
		{
			name: 'message.getAll',
			returnAll: 'messages',
			build: () => ({
				parameters: { resource: 'message', operation: 'getAll', returnAll: true },
				inputs: [{}],
			}),
		},
	];

	const figures: ChaosFigures = {
		operations: 0,
		succeeded: 0,
		failedClearly: 0,
		listChanging: 0,
		failedUnclearly: 0,
		duplicateCreates: 0,
		duplicateProfiles: 0,
		returnAllRuns: 0,
		lostItems: 0,
		duplicatedItems: 0,
		triggerPolls: 0,
		triggerDuplicates: 0,
		uncaught: 0,
		typeErrors: 0,
		requests: 0,
		faultsInjected: 0,
		rateLimited: 0,
		churnEvents: 0,
		examples: [],
	};
	const example = (text: string) => {
		if (figures.examples.length < 5) figures.examples.push(text.slice(0, 300));
	};
	const trigger = new TriggerHarness(creds, { event: 'newMessage' });
	const emitted = new Set<string>();

	const snapshot = (resource: 'leads' | 'campaigns' | 'messages'): Set<string> =>
		new Set(
			resource === 'leads' ? leadIds() : resource === 'campaigns' ? campaignIds() : messageIds(),
		);

	const runOne = async (op: Op, count: number, deletedInRound: Set<string>, slot: number) => {
		const { parameters, inputs, deletes } = op.build(count, slot);
		for (const id of deletes ?? []) deletedInRound.add(id);
		const before = op.returnAll ? snapshot(op.returnAll) : undefined;
		const churnBefore = sandbox.churnLog().events.length;
		figures.operations += inputs.length;
		let items: INodeExecutionData[];
		try {
			const result = await runNode(creds, parameters, inputs, { continueOnFail: true });
			items = result.items;
			if (result.error) {
				figures.uncaught++;
				example(`${op.name}: node error ${result.error.message}`);
				return;
			}
		} catch (error) {
			figures.uncaught++;
			if (TYPE_ERROR.test(String(error))) figures.typeErrors++;
			example(`${op.name}: thrown ${String(error)}`);
			return;
		}
		const failed = items.filter((item) => item.error || item.json.error !== undefined);
		for (const item of failed) {
			const text = `${item.error?.message ?? item.json.error ?? ''} ${item.error?.description ?? ''}`;
			if (TYPE_ERROR.test(text)) {
				figures.typeErrors++;
				example(`${op.name}: ${text}`);
			} else if (CLEAR.test(text)) {
				figures.failedClearly++;
				if (/kept changing/.test(text)) figures.listChanging++;
			} else {
				figures.failedUnclearly++;
				example(`${op.name}: unclear ${text}`);
			}
		}
		if (op.returnAll) {
			figures.returnAllRuns++;
			if (failed.length > 0) {
				return;
			}
			figures.succeeded += 1;
			const got = items.map((item) => String(item.json.id));
			const gotSet = new Set(got);
			figures.duplicatedItems += got.length - gotSet.size;
			const left = new Set(
				sandbox
					.churnLog()
					.events.slice(churnBefore)
					.flatMap((event) => event.left),
			);
			for (const id of before!) {
				if (!gotSet.has(id) && !left.has(id) && !deletedInRound.has(id)) {
					figures.lostItems++;
					example(`${op.name}: lost ${id}`);
				}
			}
			return;
		}
		// One output item per input item for these operations (a limited list gives up to 7).
		figures.succeeded += inputs.length - failed.length;
	};

	const poll = async () => {
		figures.triggerPolls++;
		try {
			for (const message of await trigger.poll()) {
				const id = String(message.id);
				if (emitted.has(id)) figures.triggerDuplicates++;
				emitted.add(id);
			}
		} catch (error) {
			const text = String((error as Error).message ?? error);
			if (TYPE_ERROR.test(text)) {
				figures.typeErrors++;
				example(`trigger: ${text}`);
			} else if (!CLEAR.test(text)) {
				figures.failedUnclearly++;
				example(`trigger: unclear ${text}`);
			}
		}
	};

	try {
		await poll(); // first activation: records where things stand
		while (figures.operations < options.operations) {
			const deletedInRound = new Set<string>();
			const round: Promise<void>[] = [];
			if (options.placedChurn !== false) {
				sandbox.addChurn({ after: 1, resource: 'leads', removeBefore: 1 });
				sandbox.addChurn({ after: 2, resource: 'leads', removeAfter: 1, insert: 1 });
			}
			for (let i = 0; i < concurrency; i++) {
				const left = options.operations - figures.operations;
				if (left <= 0) break;
				const count = Math.max(1, Math.min(left, 1 + Math.floor(random.next() * itemsPerRun)));
				round.push(runOne(pick(ops), count, deletedInRound, i));
			}
			await Promise.all(round);
			await poll();
			options.progress?.(figures);
		}
		const stats = sandbox.stats();
		figures.duplicateCreates = stats.duplicateCreates;
		const twice = duplicateProfiles(sandbox, options.seed);
		figures.duplicateProfiles = twice.length;
		for (const text of twice) example(`lead.upsert: profile held twice ${text}`);
		figures.requests = stats.requests;
		figures.faultsInjected = stats.faultsInjected;
		figures.rateLimited = stats.rateLimited;
		figures.churnEvents = sandbox.churnLog().events.length;
		return figures;
	} finally {
		await sandbox.stop();
	}
}

function flag(args: string[], name: string, fallback: number): number {
	const index = args.indexOf(`--${name}`);
	const inline = args.find((arg) => arg.startsWith(`--${name}=`));
	const raw = inline ? inline.split('=')[1] : index >= 0 ? args[index + 1] : undefined;
	if (raw === undefined) return fallback;
	const n = Number(raw);
	if (!Number.isFinite(n) || n < 1)
		throw new Error(`--${name} must be a positive number, got "${raw}"`);
	return n;
}

export async function main(): Promise<void> {
	const args = process.argv.slice(2);
	const options: ChaosOptions = {
		operations: flag(args, 'operations', 10_000),
		seed: flag(args, 'seed', 1),
		concurrency: flag(args, 'concurrency', 16),
		itemsPerRun: flag(args, 'items', 8),
	};
	const started = Date.now();
	let shown = 0;
	options.progress = (f) => {
		if (f.operations - shown >= 1000) {
			shown = f.operations;
			process.stderr.write(`  ${f.operations} operations...\n`);
		}
	};
	console.log(
		`chaos run: ${options.operations} operations, seed ${options.seed}, ${options.concurrency} executions at once, up to ${options.itemsPerRun} items each`,
	);
	let f: ChaosFigures;
	try {
		f = await runChaos(options);
	} catch (error) {
		console.error(error);
		process.exitCode = 1;
		return;
	}
	const rows: [string, number | string][] = [
		['operations attempted', f.operations],
		['succeeded', f.succeeded],
		['failed with a clear error', f.failedClearly],
		['  of which: the list kept changing', f.listChanging],
		['failed without a clear error', f.failedUnclearly],
		['duplicate creates/sends (sandbox duplicateCreates)', f.duplicateCreates],
		['profiles held by two leads after Create or Update', f.duplicateProfiles],
		['Return All runs', f.returnAllRuns],
		['lost list items', f.lostItems],
		['duplicated list items', f.duplicatedItems],
		['trigger polls', f.triggerPolls],
		['messages emitted twice by the trigger', f.triggerDuplicates],
		['uncaught errors', f.uncaught],
		['TypeErrors', f.typeErrors],
		['requests', f.requests],
		['faults injected', f.faultsInjected],
		['429s', f.rateLimited],
		['churn events', f.churnEvents],
		['wall time', `${Math.round((Date.now() - started) / 1000)} s`],
	];
	for (const [label, value] of rows) console.log(`${label.padEnd(52)} ${value}`);
	for (const text of f.examples) console.log(`  e.g. ${text}`);
	const bad =
		f.duplicateCreates +
		f.duplicateProfiles +
		f.lostItems +
		f.duplicatedItems +
		f.triggerDuplicates +
		f.uncaught +
		f.typeErrors;
	process.exitCode = bad > 0 || f.failedUnclearly > 0 ? 1 : 0;
}
