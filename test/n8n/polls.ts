/**
 * Polls with a short budget in a real n8n 2.x, and what they leave behind: the environment that gives the
 * trigger a budget of a few seconds, the trigger's saved state as n8n stores it, and the polls a request log
 * shows. Shared by the drain benchmark and the end-to-end test of a backlog that needs several polls.
 */
import path from 'node:path';

import type { RequestLogEntry } from '../sandbox/server';
import { run, type N8nOptions, type Runtime } from './runtime';

/**
 * n8n 2.41's poll budget (`getPollBudgetMs()`, trigger-execution-context.factory.js): only polls run by
 * the durable scheduler get one, `ceiling - margin`, where ceiling = min(N8N_SCHEDULER_POLL_TIMEOUT,
 * N8N_SCHEDULER_LEASE_DURATION) seconds and margin = min(max(20% of it, 5 s), half of it). Polls run by
 * the legacy cron path (the default) get n8n-core's PollContext default of 5 minutes.
 */
export function pollBudgetMs(pollTimeoutSeconds: number, leaseDurationSeconds = 60): number {
	const ceilingMs = Math.min(pollTimeoutSeconds, leaseDurationSeconds) * 1000;
	const marginMs = Math.min(Math.max(0.2 * ceilingMs, 5_000), ceilingMs / 2);
	return ceilingMs - marginMs;
}

/**
 * Settings for n8n 2.x that run poll triggers on the durable scheduler with a timeout of
 * `pollTimeoutSeconds` (budget: pollBudgetMs of it; 4 s gives 2 s), claiming due polls every second
 * without jitter. Its Poll Times must be further apart than a poll lasts: this scheduler starts a due
 * poll while the previous one of the same trigger still runs (seen with 2.41.1, one pass at a time or
 * not), and two polls on the same saved state emit the same messages twice. A poll
 * stops asking for pages at its budget; the timeout (twice the budget here) leaves room for the request
 * in flight, which may wait for the rate window.
 */
export function shortPollBudgetEnv(pollTimeoutSeconds: number): Record<string, string> {
	return {
		N8N_SCHEDULER_ENABLED: 'true',
		N8N_SCHEDULER_POLL_TRIGGERS_ENABLED: 'true',
		N8N_SCHEDULER_POLL_TIMEOUT: String(pollTimeoutSeconds),
		N8N_SCHEDULER_EXECUTOR_INTERVAL: '1',
		N8N_SCHEDULER_JITTER_RATIO: '0',
	};
}

/**
 * One row of n8n's SQLite database (`sql` with `?` for `params`), read with the sqlite3 module of the
 * provisioned n8n, as a JSON object; undefined when there is none.
 */
export async function readN8nRow(
	runtime: Runtime,
	options: N8nOptions,
	sql: string,
	params: string[],
): Promise<Record<string, unknown> | undefined> {
	const script = `
const [sqlitePath, dbPath, sql, ...params] = process.argv.slice(1);
const sqlite3 = require(sqlitePath);
const db = new sqlite3.Database(dbPath, sqlite3.OPEN_READONLY);
db.get(sql, params, (error, row) => {
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
			sql,
			...params,
		],
		{ timeoutMs: 20_000 },
	);
	return stdout === '' ? undefined : (JSON.parse(stdout) as Record<string, unknown>);
}

/**
 * A polling node's saved state as n8n keeps it: the workflow's staticData in n8n's database (key
 * `node:<node name>`). (With N8N_POLLER_DURABLE_CURSORS_ENABLED n8n 2.x moves it to its poller_state
 * table; not set here.) Returns the node's state as JSON text, or undefined when it has none yet.
 */
export async function readNodeState(
	runtime: Runtime,
	options: N8nOptions,
	workflowId: string,
	nodeName: string,
): Promise<string | undefined> {
	const row = await readN8nRow(
		runtime,
		options,
		'SELECT staticData FROM workflow_entity WHERE id = ?',
		[workflowId],
	);
	const raw = row?.staticData;
	const data = (typeof raw === 'string' ? JSON.parse(raw) : raw) as Record<string, unknown> | null;
	const node = data?.[`node:${nodeName}`];
	return node ? JSON.stringify(node) : undefined;
}

const isListRequest = (entry: RequestLogEntry) =>
	entry.method === 'GET' && entry.path === '/api/v1/messages';

/**
 * The trigger's polls in a request log: every poll starts by reading page 1 of the message list and, while
 * only new messages arrive, reads it once, so a poll is a page-1 request and the requests up to the next
 * one. Polls must not overlap (the durable scheduler leases each poll; n8n 1.x's cron does not).
 */
export function pollsIn(entries: RequestLogEntry[]): RequestLogEntry[][] {
	const polls: RequestLogEntry[][] = [];
	for (const entry of entries.filter(isListRequest)) {
		const page = Number(entry.query.page ?? 1);
		if (page === 1 || !polls.length) polls.push([entry]);
		else polls[polls.length - 1].push(entry);
	}
	return polls;
}
