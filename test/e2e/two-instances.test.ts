/**
 * A measurement, not a guarantee (opt-in: OUTREACH_E2E_TWO_INSTANCES=1): the trigger on n8n 2.x's
 * durable scheduler with durable cursors, with two `n8n start` on one database. Each instance claims
 * due polls of the trigger, so two polls can run at once in two processes, where the trigger's
 * one-poll-at-a-time guard (per process) cannot see the other. n8n 2.41.1 fences a cursor commit by the
 * poll's lease, not by the cursor it started from: both commit. Asserts that nothing is lost and prints
 * how many messages came twice. Two processes on one SQLite file is not a setup n8n supports (its
 * multi-main needs PostgreSQL); it is the cheapest way to get two schedulers claiming the same polls.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { startSandbox, type Sandbox } from '../sandbox/server';
import {
	CREDENTIAL_TYPE,
	freePort,
	importCredentials,
	importWorkflows,
	N8N_MAJOR,
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

const TAG = 'two-instances';
const KEY = 'e2e-two-instances-key-7d21';
const WORKFLOW_ID = 'e2eTwoInstances';
const enabled = N8N_MAJOR >= 2 && process.env.OUTREACH_E2E_TWO_INSTANCES === '1';

(enabled ? describe : describe.skip)(
	'two n8n instances on one database, durable scheduler and cursors (opt-in: OUTREACH_E2E_TWO_INSTANCES=1, n8n 2.x)',
	() => {
		let runtime: Runtime;
		let sandbox: Sandbox;
		let options: N8nOptions;
		let a: N8nServer;
		let b: N8nServer | undefined;
		let userFolder: string;
		let apiKey: string;
		let leadId: string;
		let failed = false;

		beforeAll(async () => {
			userFolder = fs.mkdtempSync(path.join(os.tmpdir(), `outreach-${TAG}-`));
			(globalThis as { __outreachE2eUserFolder?: string }).__outreachE2eUserFolder = userFolder;
			runtime = await provision();
			sandbox = await startSandbox({
				apiKeys: [KEY],
				seed: { leads: 1, campaigns: 0, messages: 0 },
				rateLimit: 100_000,
				windowMs: 2_000,
			});
			leadId = sandbox.store.findLeads({})[0].id;
			// Debug level: n8n logs each poll it runs ("Poll returned ..."), which tells the instances apart.
			const env = { ...DURABLE_ENV, N8N_LOG_LEVEL: 'debug' };
			options = { userFolder, port: await freePort(), brokerPort: await freePort(), env };
			a = new N8nServer(runtime, options);
			await packAndInstall(userFolder);
			await importCredentials(runtime, options, [
				{
					...credential(WORKFLOW_ID),
					type: CREDENTIAL_TYPE,
					data: { baseUrl: sandbox.url, apiKey: KEY },
				},
			]);
			await importWorkflows(runtime, options, [triggerWorkflow(WORKFLOW_ID, leadId, WORKFLOW_ID)]);
			await a.start();
			await a.ensureOwner(OWNER);
			apiKey = await a.createApiKey(TAG);
		}, 600_000);

		afterAll(async () => {
			await b?.stop();
			await a?.stop();
			await sandbox?.stop();
			if (a) reportOrClean(TAG, a, userFolder, failed);
		});

		test('every message at least once; how many twice', async () => {
			try {
				await a.publish(apiKey, [WORKFLOW_ID]);
				await waitFor(
					'the first cursor',
					async () => {
						const row = await pollerState(runtime, options, WORKFLOW_ID);
						return row && String(row.cursor).includes('seen') ? row : undefined;
					},
					60_000,
				);
				b = new N8nServer(runtime, {
					...options,
					port: await freePort(),
					brokerPort: await freePort(),
					logFile: path.join(userFolder, 'n8n-b.log'),
				});
				await b.start();
				sandbox.config({ latencyMs: 250 });
				const inserted = sandbox.insertMessages({ count: 2_000, lead_id: leadId }).ids;
				const executions = () => executionsOf(a, apiKey, WORKFLOW_ID);
				const emitted = () => emittedIds(a, apiKey, WORKFLOW_ID);
				await waitFor(
					'every message',
					async () => (new Set(await emitted()).size >= inserted.length ? true : undefined),
					120_000,
				);
				await tick(5_000);
				const ids = await emitted();
				const lines = (file: string) => fs.readFileSync(file, 'utf8').split('\n');
				const count = (file: string, text: string) =>
					lines(file).filter((line) => line.includes(text)).length;
				process.stdout.write(
					`[two-instances] ${ids.length} emitted, ${new Set(ids).size} distinct of ${inserted.length}, ` +
						`in ${(await executions()).length} executions; polls run by A ${count(a.logFile, 'Poll returned')}, ` +
						`by B ${count(b.logFile, 'Poll returned')}; polls skipped while one ran in the same process: ` +
						`A ${count(a.logFile, 'still running')}, B ${count(b.logFile, 'still running')}\n`,
				);
				expect(new Set(ids)).toEqual(new Set(inserted));
			} catch (error) {
				failed = true;
				throw error;
			}
		}, 600_000);
	},
);
