/**
 * The trigger on n8n 2.x's durable scheduler with durable poll cursors (the settings docs/trigger.md
 * recommends), in a real n8n against the sandbox: Poll Times every second, closer together than a poll
 * with a 2 s budget lasts, so n8n starts polls of the trigger while one still runs. Every new message is
 * emitted exactly once across many polls, n8n killed (SIGKILL) in the middle of a poll and started
 * again, and a graceful restart. A key limited for an hour and a refused key are polled once, then not
 * again (n8n backs off by the cause the node declares). Counted at the sandbox and in n8n's executions.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { startSandbox, type RequestLogEntry, type Sandbox } from '../sandbox/server';
import {
	CREDENTIAL_TYPE,
	freePort,
	importCredentials,
	importWorkflows,
	N8N_MAJOR,
	N8N_VERSION,
	N8nServer,
	packAndInstall,
	provision,
	reportOrClean,
	type N8nOptions,
	type Runtime,
} from '../n8n/runtime';
import {
	credential,
	DURABLE_ENV,
	emittedIds,
	executionsOf,
	pollerState,
	tick,
	triggerWorkflow,
	waitFor,
} from './durable-world';
import { OWNER } from './harness';

const TAG = 'durable';
const KEY = 'e2e-durable-key-5f1a';
const HOUR_KEY = 'e2e-durable-hour-key-0c7e';
const REFUSED_KEY = 'e2e-durable-refused-key-93ab';
const MAIN_ID = 'e2eDurableMain';
const HOUR_ID = 'e2eDurableHour';
const REFUSED_ID = 'e2eDurableRefused';

const suite = N8N_MAJOR >= 2 ? describe : describe.skip;

suite(
	N8N_MAJOR >= 2
		? `trigger on the durable scheduler with durable cursors (n8n ${N8N_VERSION})`
		: `trigger on the durable scheduler: skipped, n8n ${N8N_VERSION} has no durable scheduler (2.36+)`,
	() => {
		let runtime: Runtime;
		let sandbox: Sandbox;
		let options: N8nOptions;
		let n8n: N8nServer;
		let userFolder: string;
		let apiKey: string;
		let failed = false;
		const leads: string[] = [];

		beforeAll(async () => {
			userFolder = fs.mkdtempSync(path.join(os.tmpdir(), `outreach-${TAG}-`));
			(globalThis as { __outreachE2eUserFolder?: string }).__outreachE2eUserFolder = userFolder;
			runtime = await provision();
			sandbox = await startSandbox({
				apiKeys: [KEY, HOUR_KEY, REFUSED_KEY],
				seed: { leads: 3, campaigns: 0, messages: 0 },
				rateLimit: 100_000,
				windowMs: 2_000,
			});
			leads.push(...sandbox.store.findLeads({}).map((lead) => lead.id));
			options = {
				userFolder,
				port: await freePort(),
				brokerPort: await freePort(),
				env: DURABLE_ENV,
			};
			n8n = new N8nServer(runtime, options);
			await packAndInstall(userFolder);
			await importCredentials(
				runtime,
				options,
				[
					[MAIN_ID, KEY],
					[HOUR_ID, HOUR_KEY],
					[REFUSED_ID, REFUSED_KEY],
				].map(([id, key]) => ({
					...credential(id),
					type: CREDENTIAL_TYPE,
					data: { baseUrl: sandbox.url, apiKey: key },
				})),
			);
			await importWorkflows(runtime, options, [
				triggerWorkflow(MAIN_ID, leads[0], MAIN_ID),
				triggerWorkflow(HOUR_ID, leads[1], HOUR_ID),
				triggerWorkflow(REFUSED_ID, leads[2], REFUSED_ID),
			]);
			await n8n.start();
			await n8n.ensureOwner(OWNER);
			apiKey = await n8n.createApiKey(TAG);
		}, 600_000);

		afterAll(async () => {
			await n8n?.stop();
			await sandbox?.stop();
			if (n8n) reportOrClean(TAG, n8n, userFolder, failed);
		});

		const listReads = (leadId: string, since = 0) =>
			sandbox
				.requests(since)
				.filter(
					(e: RequestLogEntry) => e.path === '/api/v1/messages' && e.query.lead_id === leadId,
				);
		const executions = () => executionsOf(n8n, apiKey, MAIN_ID);
		const emitted = () => emittedIds(n8n, apiKey, MAIN_ID);
		const restart = async () => {
			await n8n.start();
			await n8n.ensureOwner(OWNER);
		};

		test('every new message exactly once across many overlapping polls, a SIGKILL mid-poll and a restart; a key limited for an hour and a refused key are not polled again', async () => {
			try {
				await n8n.publish(apiKey, [MAIN_ID, HOUR_ID, REFUSED_ID]);
				// From now on (activation tests the key, so it must work until then): one key's list
				// answers 429 with Retry-After of an hour, every time; another key is refused (401).
				const faultsFrom = sandbox.requests().length;
				sandbox.addFault({
					path: '/api/v1/messages',
					query: { lead_id: leads[1] },
					status: 429,
					retryAfter: 3_600,
					times: 1_000,
				});
				sandbox.addFault({
					path: '/api/v1/messages',
					query: { lead_id: leads[2] },
					status: 401,
					times: 1_000,
				});
				// Durable cursors on: the first poll's memory is a poller_state row, not the workflow's static data.
				const firstCursor = await waitFor(
					'the first poll to commit its cursor',
					async () => {
						const row = await pollerState(runtime, options, MAIN_ID);
						return row && String(row.cursor).includes('seen') ? row : undefined;
					},
					60_000,
				);
				expect(firstCursor).toBeDefined();
				expect(fs.readFileSync(n8n.logFile, 'utf8')).not.toContain(
					'durable poll cursors stay disabled',
				);

				// A backlog several 2-s polls need; each page read takes 250 ms.
				sandbox.config({ latencyMs: 250 });
				const inserted = sandbox.insertMessages({ count: 3_000, lead_id: leads[0] }).ids;
				await waitFor(
					'a first batch',
					async () => ((await emitted()).length > 0 ? true : undefined),
					60_000,
				);
				// SIGKILL while a page read of a poll is under way (the poll cannot have returned).
				const since = sandbox.requests().length;
				await waitFor(
					'a page read under way',
					() => listReads(leads[0], since).some((e) => e.status === null) || undefined,
					30_000,
				);
				const killedAfter = (await emitted()).length;
				const killedAt = sandbox.requests().length;
				process.kill(-n8n.pid!, 'SIGKILL');
				await n8n.stop();
				await restart();
				await waitFor(
					'every message of the backlog',
					async () => ((await emitted()).length >= inserted.length ? true : undefined),
					120_000,
				);
				expect(killedAfter).toBeLessThan(inserted.length);

				// A graceful restart, then more messages.
				await n8n.stop();
				await restart();
				sandbox.config({ latencyMs: 0 });
				const later = sandbox.insertMessages({ count: 150, lead_id: leads[0] }).ids;
				const all = [...inserted, ...later];
				await waitFor(
					'the later messages',
					async () => ((await emitted()).length >= all.length ? true : undefined),
					60_000,
				);
				// Some more polls: nothing comes again.
				await tick(5_000);
				const ids = await emitted();
				expect(ids).toHaveLength(all.length);
				expect(new Set(ids)).toEqual(new Set(all));
				// Polls did start while one of the same trigger ran (and emitted nothing).
				const log = fs.readFileSync(n8n.logFile, 'utf8').split('\n');
				const count = (text: string) => log.filter((line) => line.includes(text)).length;
				const overlaps = count('the previous poll of this trigger is still running');
				const unsaved = count('n8n has not saved its progress yet');
				process.stdout.write(
					`[durable] ${all.length} messages in ${(await executions()).length} executions; ${listReads(leads[0]).length} list requests; ${overlaps} polls skipped while one ran, ${unsaved} before the last one's progress was saved; SIGKILL after ${killedAfter} emitted\n`,
				);
				expect(overlaps).toBeGreaterThan(0);

				// Polled once each (twice when n8n had started the next due poll before it recorded the
				// first failure), then never again for the rest of the run: about a minute of polls due
				// every second, a SIGKILL and a restart.
				for (const [lead, status] of [
					[leads[1], 429],
					[leads[2], 401],
				] as const) {
					const reads = listReads(lead, faultsFrom);
					process.stdout.write(
						`[durable] lead ${lead}: ${reads.length} list request(s) after its fault\n`,
					);
					expect(reads.length).toBeGreaterThanOrEqual(1);
					expect(reads.length).toBeLessThanOrEqual(2);
					expect(reads.every((e) => e.status === status)).toBe(true);
					// None after n8n was killed and started again: the backoff is kept in its database.
					expect(listReads(lead, killedAt)).toHaveLength(0);
				}
				const hour = await pollerState(runtime, options, HOUR_ID);
				expect(Date.parse(String(hour?.backoffUntil)) - Date.now()).toBeGreaterThan(50 * 60_000);
				const refused = await pollerState(runtime, options, REFUSED_ID);
				expect(Date.parse(String(refused?.backoffUntil)) - Date.now()).toBeGreaterThan(20 * 60_000);
			} catch (error) {
				failed = true;
				await explainFailure();
				throw error;
			}
		}, 600_000);

		// What the next reader needs when a wait times out: did the main trigger's polls reach the
		// sandbox (and did their answers come back), and what does n8n's scheduler hold for it.
		const explainFailure = async () => {
			try {
				const started = sandbox.requests()[0]?.time ?? Date.now();
				const reads = listReads(leads[0]).slice(-12);
				process.stdout.write(
					`[durable] main trigger: ${listReads(leads[0]).length} list requests; the last ones (s since the sandbox started, status, page):\n` +
						reads
							.map(
								(e) =>
									`  ${((e.time - started) / 1000).toFixed(1)} s ${e.status ?? 'in flight'} page ${String(e.query.page ?? 1)}`,
							)
							.join('\n') +
						`\n[durable] now ${((Date.now() - started) / 1000).toFixed(1)} s; main trigger's poller_state: ${JSON.stringify(await pollerState(runtime, options, MAIN_ID))}\n`,
				);
			} catch (problem) {
				process.stdout.write(`[durable] could not explain the failure: ${String(problem)}\n`);
			}
		};
	},
);
