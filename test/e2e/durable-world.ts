/**
 * What the durable-scheduler end-to-end tests share: the settings docs/trigger.md recommends, a trigger
 * workflow polled every second, n8n's poller_state row of a trigger, and small waits.
 */
import path from 'node:path';

import { CREDENTIAL_TYPE, NODE_TYPES, run, type N8nOptions, type Runtime } from '../n8n/runtime';
import { shortPollBudgetEnv } from '../n8n/polls';
import { TRIGGER_NODE, workflow, type NodeJson, type WorkflowJson } from '../n8n/workflow-json';

export const credential = (id: string) => ({ id, name: `Outreach (${id})` });

/** What docs/trigger.md recommends on n8n 2.36+, with a poll timeout of 4 s (a 2 s budget). */
export const DURABLE_ENV = {
	...shortPollBudgetEnv(4),
	N8N_USE_WORKFLOW_PUBLICATION_SERVICE: 'true',
	N8N_POLLER_DURABLE_CURSORS_ENABLED: 'true',
};

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

/** Trigger on one lead's messages, polled every second of every minute. */
export function triggerWorkflow(id: string, leadId: string, credentialId: string): WorkflowJson {
	const node: NodeJson = {
		id: `${id}-trigger`,
		name: TRIGGER_NODE,
		type: NODE_TYPES.trigger,
		typeVersion: 1,
		position: [0, 0],
		parameters: {
			pollTimes: {
				item: Array.from({ length: 60 }, (_, s) => ({
					mode: 'custom',
					cronExpression: `${s} * * * * *`,
				})),
			},
			filters: { leadId: { __rl: true, mode: 'id', value: leadId } },
			options: {},
		},
		credentials: { [CREDENTIAL_TYPE]: credential(credentialId) },
	};
	return workflow(id, `e2e: ${id}`, [node]);
}

/** A poll node's row of n8n's poller_state table (its durable cursor and backoff), read with n8n's sqlite3. */
export async function pollerState(
	runtime: Runtime,
	options: N8nOptions,
	workflowId: string,
): Promise<Json | undefined> {
	const script = `
const sqlite3 = require(process.argv[1]);
const db = new sqlite3.Database(process.argv[2], sqlite3.OPEN_READONLY);
db.get('SELECT * FROM poller_state WHERE workflowId = ?', [process.argv[3]], (error, row) => {
	if (error) { process.stderr.write(error.message); process.exit(1); }
	process.stdout.write(row ? JSON.stringify(row) : '');
	db.close();
});`;
	const { stdout } = await run(
		runtime.nodeBin,
		[
			'-e',
			script,
			path.join(runtime.n8nDir, 'node_modules', 'sqlite3'),
			path.join(options.userFolder, '.n8n', 'database.sqlite'),
			workflowId,
		],
		{ timeoutMs: 20_000 },
	);
	return stdout === '' ? undefined : (JSON.parse(stdout) as Json);
}
