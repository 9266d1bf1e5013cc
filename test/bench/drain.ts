/**
 * Scenario 9 of `npm run bench` (key `drain`): a backlog of 20,000 messages (4,000 with --quick) queued at
 * once, drained by the published trigger in n8n, polled by n8n's own scheduler, with a poll budget short
 * enough that the drain needs several polls. Runs last: it restarts the bench's n8n with the durable
 * scheduler on (see test/n8n/polls.ts for why and for the budget it gives).
 *
 * Figures: requests from the backlog's insertion to the end of the drain against ceil(N / 100) (target
 * within 5%), polls needed, every inserted id emitted exactly once across the executions (oldest first
 * within each), the largest saved state seen, and the cost of the polls after the drain (1 request each).
 */
import { randomUUID } from 'node:crypto';

import { importWorkflows, N8N_MAJOR } from '../n8n/runtime';
import { pollBudgetMs, pollsIn, readNodeState, shortPollBudgetEnv } from '../n8n/polls';
import type { RequestLogEntry } from '../sandbox/server';
import { sleep } from './measure';
import { scenario, type Scenario, type ScenarioResult, type Target } from './figures';
import { prepare } from './runs';
import { TRIGGER_NODE, triggerWorkflow, type WorkflowJson } from './workflows';
import { log, type World } from './world';

export const DRAIN_WORKFLOW_ID = 'benchTriggerDrain';
/** n8n's poll timeout for this scenario: a 2 s budget (pollBudgetMs(4)), one rate window. */
export const DRAIN_POLL_TIMEOUT_SECONDS = 4;
const PER_PAGE = 100;

export const drainSize = (mode: 'full' | 'quick') => (mode === 'full' ? 20_000 : 4_000);

/**
 * The trigger alone, no filters, polled every 5 s: further apart than a poll lasts (its 2 s budget and
 * the request in flight), as n8n's durable scheduler would otherwise run two polls at once.
 */
export const DRAIN_POLL_EVERY_SECONDS = 5;
function drainWorkflow(): WorkflowJson {
	const base = triggerWorkflow(DRAIN_POLL_EVERY_SECONDS);
	return {
		...base,
		id: DRAIN_WORKFLOW_ID,
		name: 'bench: trigger drains a backlog',
		nodes: base.nodes.map((node) => ({ ...node, id: randomUUID() })),
	};
}

interface Execution {
	id: string;
	status: string;
	startedAt?: string;
	stoppedAt?: string | null;
	data?: {
		resultData: {
			runData: Record<string, Array<{ data?: { main: Array<Array<{ json: { id?: unknown } }>> } }>>;
		};
	};
}

export interface DrainHooks {
	world: World;
	/** Waits out the last rate window and resets the sandbox with this seed. */
	prepare: (world: World, seed: { leads: number; messages?: number }) => Promise<void>;
	scenario: (
		world: World,
		id: string,
		key: 'drain',
		title: string,
		subject: 'package',
		how: string,
		requestsMin: number,
	) => ScenarioResult;
	log: (message: string) => void;
}

export async function drainScenario({
	world,
	prepare,
	scenario,
	log,
}: DrainHooks): Promise<ScenarioResult> {
	const { sandbox, n8n, apiKey } = world;
	if (N8N_MAJOR < 2)
		throw new Error('the drain scenario needs n8n 2.x: n8n 1.x gives polls no budget to stop at');
	const count = drainSize(world.sizes.mode);
	const budgetMs = pollBudgetMs(DRAIN_POLL_TIMEOUT_SECONDS);
	const result = scenario(
		world,
		'9',
		'drain',
		`Trigger: drain a ${count.toLocaleString('en-US')}-message backlog over several polls`,
		'package',
		`n8n durable scheduler, poll every ${DRAIN_POLL_EVERY_SECONDS} s, budget ${budgetMs / 1000} s`,
		Math.ceil(count / PER_PAGE),
	);
	log(`scenario ${result.id}: ${result.title}`);
	await prepare(world, { leads: 20, messages: 50 });

	// The durable scheduler gives polls a budget; it is read at start: restart n8n with it on.
	await n8n.stop();
	await importWorkflows(n8n.runtime, n8n.options, [drainWorkflow()]);
	n8n.options.env = {
		...n8n.options.env,
		...shortPollBudgetEnv(DRAIN_POLL_TIMEOUT_SECONDS),
	};
	await n8n.start();
	log(
		`  n8n restarted with the durable scheduler (poll timeout ${DRAIN_POLL_TIMEOUT_SECONDS} s, budget ${budgetMs} ms) in ${(n8n.startupMs / 1000).toFixed(1)} s`,
	);

	const executions = async (includeData: boolean) =>
		(
			await n8n.publicApi<{ data: Execution[] }>(
				apiKey,
				'GET',
				`/executions?workflowId=${DRAIN_WORKFLOW_ID}&includeData=${includeData}&limit=250`,
			)
		).data;
	const lastSeq = () => sandbox.requests().at(-1)?.seq ?? 0;
	const state = () => readNodeState(n8n.runtime, n8n.options, DRAIN_WORKFLOW_ID, TRIGGER_NODE);

	let since = lastSeq();
	await n8n.publish(apiKey, [DRAIN_WORKFLOW_ID]);
	try {
		// The first poll only notes where the list stands; the backlog comes after its state is saved.
		const deadline = Date.now() + 60_000;
		for (;;) {
			const saved = await state();
			if (saved && (JSON.parse(saved) as { seen?: unknown[] }).seen?.length) break;
			if (Date.now() > deadline) throw new Error('the drain trigger saved no state within 60 s');
			await sleep(300);
		}
		await sleep(1_500);
		since = lastSeq();
		const inserted = sandbox.insertMessages({ count }).ids;
		const position = new Map(inserted.map((id, i) => [id, i]));
		log(`  ${count} messages inserted`);

		// Until every inserted id came out (or no progress for 60 s): executions, and the state's size.
		const seen = new Map<string, string[]>();
		let stateBytes = 0;
		let progressAt = Date.now();
		let emittedCount = 0;
		while (emittedCount < count) {
			for (const e of await executions(false)) {
				if (seen.has(e.id) || !e.stoppedAt) continue;
				const full = await n8n.publicApi<Execution>(
					apiKey,
					'GET',
					`/executions/${e.id}?includeData=true`,
				);
				const items = full.data?.resultData.runData[TRIGGER_NODE]?.[0]?.data?.main[0] ?? [];
				seen.set(
					e.id,
					items.map((item) => String(item.json.id)),
				);
				progressAt = Date.now();
			}
			emittedCount = [...seen.values()].reduce((sum, ids) => sum + ids.length, 0);
			const saved = await state();
			if (saved) stateBytes = Math.max(stateBytes, Buffer.byteLength(saved));
			if (Date.now() - progressAt > 60_000) {
				log(`  no new execution for 60 s (${emittedCount} of ${count} emitted)`);
				break;
			}
			await sleep(500);
		}
		const drainedAt = lastSeq();
		// The polls after the drain: each must cost one request and start nothing.
		await sleep(3 * DRAIN_POLL_EVERY_SECONDS * 1000 + 1000);
		const after = await executions(false);
		const finalState = await state();
		if (finalState) stateBytes = Math.max(stateBytes, Buffer.byteLength(finalState));

		if (process.env.BENCH_DEBUG)
			for (const e of sandbox.requests(since))
				log(
					`    ${new Date(e.time).toISOString()} ${e.method} ${e.path} page=${String(e.query.page)} -> ${e.status}`,
				);
		const polls = pollsIn(sandbox.requests(since));
		// The drain's polls: up to the last one that read more than page 1 before the drain was seen over.
		const drainPolls = polls.filter((p) => p[0].seq <= drainedAt);
		while (drainPolls.length && drainPolls.at(-1)!.length === 1) drainPolls.pop();
		const idle = polls.slice(drainPolls.length).filter((p) => p[0].seq > drainedAt);
		const drainRequests: RequestLogEntry[] = drainPolls.flat();

		const perExecution = [...seen.entries()];
		const emitted = perExecution.flatMap(([, ids]) => ids);
		const distinct = new Set(emitted);
		const missing = inserted.filter((id) => !distinct.has(id)).length;
		const foreign = [...distinct].filter((id) => !position.has(id)).length;
		const duplicates = emitted.length - distinct.size;
		const ordered = perExecution.every(([, ids]) =>
			ids.every((id, i) => i === 0 || position.get(ids[i - 1])! < position.get(id)!),
		);
		const idleCosts = idle.map((p) => p.length);
		const lateExecutions = after.filter((e) => !seen.has(e.id)).length;
		const first = drainRequests[0]?.time;
		const stops = perExecution
			.map(([id]) => after.find((e) => e.id === id)?.stoppedAt)
			.filter((s): s is string => typeof s === 'string')
			.map((s) => Date.parse(s));
		const wallMs = first !== undefined && stops.length ? Math.max(...stops) - first : null;
		const failed = after.filter((e) => seen.has(e.id) && e.status !== 'success').length;
		const complete =
			missing === 0 &&
			duplicates === 0 &&
			foreign === 0 &&
			ordered &&
			lateExecutions === 0 &&
			idleCosts.length > 0 &&
			idleCosts.every((n) => n === 1);
		result.runs.push({
			run: 1,
			requests: drainRequests.length,
			rateLimited: drainRequests.filter((e) => e.status === 429).length,
			maxConcurrent: sandbox.stats().maxConcurrent,
			spanMs: drainRequests.length ? drainRequests.at(-1)!.time - drainRequests[0].time : 0,
			failedExecution: failed > 0,
			failedItems: 0,
			returned: emitted.length,
			distinct: distinct.size,
			expected: count,
			complete,
			wallMs,
			error: complete
				? undefined
				: `${missing} missing, ${duplicates} duplicate, ${foreign} not from the backlog, ${ordered ? '' : 'NOT '}oldest first, ${lateExecutions} executions after the drain, idle polls ${idleCosts.join('/') || 'none seen'}`,
		});
		result.notes.push(
			`n8n 2.41 gives a poll a budget only under its durable scheduler (N8N_SCHEDULER_ENABLED=true, N8N_SCHEDULER_POLL_TRIGGERS_ENABLED=true): ` +
				`N8N_SCHEDULER_POLL_TIMEOUT=${DRAIN_POLL_TIMEOUT_SECONDS} gives getPollBudgetMs() = ${budgetMs} ms, one rate window, so a poll reads about ${world.sizes.rateLimit} pages before it stops`,
			`polls needed: ${drainPolls.length} (requests per poll: ${drainPolls.map((p) => p.length).join(', ')}); executions: ${perExecution.length} (messages per execution: ${perExecution.map(([, ids]) => ids.length).join(', ')})`,
			`requests: ${drainRequests.length} against the minimum ceil(${count} / ${PER_PAGE}) = ${result.requestsMin} (${((drainRequests.length / result.requestsMin - 1) * 100).toFixed(1)}% over)`,
			`emitted: ${emitted.length} ids, ${distinct.size} distinct; ${missing} missing, ${duplicates} duplicate, ${foreign} not from the backlog; oldest first within each execution: ${ordered ? 'yes' : 'NO'}`,
			`saved state (the workflow's staticData for the trigger, in n8n's database): ${stateBytes} bytes at most`,
			`polls after the drain: ${idleCosts.length} (requests each: ${idleCosts.join(', ') || '-'}), executions started after the drain: ${lateExecutions}`,
		);
		(result as ScenarioResult & { drain?: unknown }).drain = {
			polls: drainPolls.map((p) => p.length),
			executions: perExecution.map(([, ids]) => ids.length),
			missing,
			duplicates,
			foreign,
			ordered,
			stateBytes,
			idlePollRequests: idleCosts,
			budgetMs,
		};
		log(
			`  drained in ${drainPolls.length} polls, ${drainRequests.length} requests (min ${result.requestsMin}), ${distinct.size}/${count} distinct, ${duplicates} dup, state ${stateBytes} B, idle polls ${idleCosts.join('/')}`,
		);
	} finally {
		await n8n
			.publicApi(apiKey, 'POST', `/workflows/${DRAIN_WORKFLOW_ID}/unpublish`)
			.catch((error) => log(`could not unpublish the drain workflow: ${(error as Error).message}`));
	}
	return result;
}

/** The targets for the drain: within 5% of the minimum, exactly once, state bounded, idle = 1. */
export function drainTargets(scenarios: ScenarioResult[]): Target[] {
	return scenarios
		.filter((s) => s.key === 'drain')
		.flatMap((s) => {
			const run = s.runs[0];
			const details = (s as ScenarioResult & { drain?: { stateBytes: number; polls: number[] } })
				.drain;
			if (!run) return [];
			return [
				{
					scenario: s.id,
					target: 'requests within 5% of ceil(N / page size)',
					met: run.requests <= Math.ceil(s.requestsMin * 1.05),
					detail: `${run.requests} sent, minimum ${s.requestsMin}`,
				},
				{
					scenario: s.id,
					target: 'the drain needs several polls',
					met: (details?.polls.length ?? 0) >= 2,
					detail: `${details?.polls.length ?? 0} polls`,
				},
				{
					scenario: s.id,
					target: 'every message exactly once, oldest first; idle polls cost 1 request',
					met: run.complete,
					detail: run.error ?? `${run.distinct} of ${run.expected}, 0 missing, 0 duplicate`,
				},
			];
		});
}

/** Registered last in scenarios.ts: it restarts n8n with the durable scheduler. */
export const drain: Scenario = {
	key: 'drain',
	run: async (world) => [await drainScenario({ world, prepare, scenario, log })],
	targets: drainTargets,
};
