/**
 * What the durable-scheduler end-to-end tests share: the settings docs/trigger.md recommends, a trigger
 * workflow (polled every second unless told otherwise), the messages n8n's executions of it emitted,
 * n8n's poller_state row of a trigger, and small waits.
 */
import { createHash } from 'node:crypto';

import {
	CREDENTIAL_TYPE,
	NODE_TYPES,
	type N8nOptions,
	type N8nServer,
	type Runtime,
} from '../n8n/runtime';
import { readN8nRow, shortPollBudgetEnv } from '../n8n/polls';
import { TRIGGER_NODE, workflow, type NodeJson, type WorkflowJson } from '../n8n/workflow-json';

export const credential = (id: string) => ({ id, name: `Outreach (${id})` });

/** The four settings docs/trigger.md recommends on n8n 2.36+, everything else n8n's default. */
export const RECOMMENDED_ENV = {
	N8N_SCHEDULER_ENABLED: 'true',
	N8N_SCHEDULER_POLL_TRIGGERS_ENABLED: 'true',
	N8N_USE_WORKFLOW_PUBLICATION_SERVICE: 'true',
	N8N_POLLER_DURABLE_CURSORS_ENABLED: 'true',
};

/** What docs/trigger.md recommends, with a poll timeout of 4 s (a 2 s budget). */
export const DURABLE_ENV = { ...RECOMMENDED_ENV, ...shortPollBudgetEnv(4) };

export type Json = Record<string, unknown>;
export interface Execution {
	id: string;
	status: string;
	data?: {
		resultData: {
			runData: Record<string, Array<{ data?: { main: Array<Array<{ json: Json }>> } }>>;
		};
	};
}

export const tick = async (ms: number) => await new Promise((resolve) => setTimeout(resolve, ms));
export async function waitFor<T>(
	what: string,
	probe: () => Promise<T | undefined> | T | undefined,
	ms: number,
): Promise<T> {
	const deadline = Date.now() + ms;
	for (;;) {
		const value = await probe();
		if (value !== undefined) return value;
		if (Date.now() > deadline)
			throw new Error(`timed out after ${ms / 1000} s waiting for ${what}`);
		await tick(250);
	}
}

/** Poll Times: every second of every minute (60 custom entries). */
export const EVERY_SECOND = Array.from({ length: 60 }, (_, s) => ({
	mode: 'custom',
	cronExpression: `${s} * * * * *`,
}));
/** Poll Times: "Every Minute", as a user picks it in the editor. */
export const EVERY_MINUTE = [{ mode: 'everyMinute' }];

/** The trigger node's id in triggerWorkflow(id, ...). */
export const triggerNodeId = (workflowId: string) => `${workflowId}-trigger`;

/** Trigger on one lead's messages, polled at `pollTimes` (every second of every minute by default). */
export function triggerWorkflow(
	id: string,
	leadId: string,
	credentialId: string,
	pollTimes: Array<Record<string, unknown>> = EVERY_SECOND,
): WorkflowJson {
	const node: NodeJson = {
		id: triggerNodeId(id),
		name: TRIGGER_NODE,
		type: NODE_TYPES.trigger,
		typeVersion: 1,
		position: [0, 0],
		parameters: {
			pollTimes: { item: pollTimes },
			filters: { leadId: { __rl: true, mode: 'id', value: leadId } },
			options: {},
		},
		credentials: { [CREDENTIAL_TYPE]: credential(credentialId) },
	};
	return workflow(id, `e2e: ${id}`, [node]);
}

/** A poll node's row of n8n's poller_state table (its durable cursor and backoff). */
export async function pollerState(
	runtime: Runtime,
	options: N8nOptions,
	workflowId: string,
): Promise<Json | undefined> {
	return (await readN8nRow(runtime, options, 'SELECT * FROM poller_state WHERE workflowId = ?', [
		workflowId,
	])) as Json | undefined;
}

/** Every execution of a workflow, with its data, through n8n's public API (all pages). */
export async function executionsOf(
	n8n: N8nServer,
	apiKey: string,
	workflowId: string,
): Promise<Execution[]> {
	const all: Execution[] = [];
	let cursor: string | undefined;
	do {
		const page = await n8n.publicApi<{ data: Execution[]; nextCursor?: string | null }>(
			apiKey,
			'GET',
			`/executions?workflowId=${workflowId}&includeData=true&limit=100${cursor ? `&cursor=${cursor}` : ''}`,
		);
		all.push(...page.data);
		cursor = page.nextCursor ?? undefined;
	} while (cursor);
	return all;
}

/** The message ids the trigger emitted, over every execution of its workflow (a repeat counts twice). */
export async function emittedIds(
	n8n: N8nServer,
	apiKey: string,
	workflowId: string,
): Promise<string[]> {
	return (await executionsOf(n8n, apiKey, workflowId)).flatMap((e) =>
		(e.data?.resultData.runData[TRIGGER_NODE]?.[0]?.data?.main[0] ?? []).map((item) =>
			String(item.json.id),
		),
	);
}

/**
 * The second of the minute at which n8n 2.41.1's durable scheduler polls a trigger whose Poll Times is
 * "Every Minute" (or "Every Hour"...): fixed per trigger from its workflow and node id
 * (`seededCron` and `stableInt` in n8n's scheduling/poll-trigger-node/poll-trigger-job-registrar.js).
 */
export function seededSecond(workflowId: string, nodeId: string): number {
	const hash = createHash('sha256').update(`${workflowId}:${nodeId}:second`).digest();
	return hash.readUInt32BE(0) % 60;
}

/** A workflow id starting with `prefix` whose trigger n8n polls at `second` of every minute. */
export function workflowIdPolledAt(prefix: string, second: number): string {
	for (let n = 0; ; n++) {
		const id = `${prefix}${n}`;
		if (seededSecond(id, triggerNodeId(id)) === second) return id;
	}
}

/**
 * A poll node's scheduled job in n8n 2.41.1's scheduled_job table (owned by the workflow, the node its
 * member): its cron, and the first occurrence n8n queued for it in scheduled_task (UTC), once queued.
 */
export async function scheduledJob(
	runtime: Runtime,
	options: N8nOptions,
	workflowId: string,
	nodeId = triggerNodeId(workflowId),
): Promise<{ cronExpression: string; firstScheduledFor?: string } | undefined> {
	return (await readN8nRow(
		runtime,
		options,
		`SELECT j.cronExpression, (SELECT MIN(t.scheduledFor) FROM scheduled_task t WHERE t.jobId = j.id) AS firstScheduledFor
		FROM scheduled_job j WHERE j.ownerId = ? AND j.ownerMemberId = ?`,
		[workflowId, nodeId],
	)) as { cronExpression: string; firstScheduledFor?: string } | undefined;
}
