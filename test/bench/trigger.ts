/**
 * Scenario 4: the trigger, published, polled by n8n's own scheduler: idle polls (4a) and a poll after a
 * backlog was inserted (4b).
 */
import type { RequestLogEntry, Sandbox } from '../sandbox/server';
import { fmt, scenario, type Scenario, type ScenarioResult } from './figures';
import { sleep } from './measure';
import { beginMemory, endMemory, prepare, trafficFigures, type Json } from './runs';
import { TRIGGER_NODE, TRIGGER_WORKFLOW_ID } from './workflows';
import { log, PER_PAGE, type World } from './world';

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

async function triggerPolls(
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

export const trigger: Scenario = {
	key: 'trigger',
	async run(world) {
		const s = world.sizes;
		const results: ScenarioResult[] = [];
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
		const notes = await triggerPolls(world, idle, backlog);
		idle.notes.push(...notes);
		backlog.notes.push(
			'minimum: the list is newest first; the new messages fill its first positions, and a poll is sure it has them all only when it reaches a message it had seen, so ceil((backlog + 1) / 100) pages. Trusting meta.total instead would save that page only when the backlog fills whole pages, and would miss messages whenever some left the list (or the filter) meanwhile',
		);
		results.push(idle, backlog);
		return results;
	},
};
