/**
 * The world of the end-to-end tests: the sandbox (in this process), a fresh n8n user folder with the packed
 * package installed, the credential and workflows imported, and one `n8n start` serving every case.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import {
	startSandbox,
	type Campaign,
	type CampaignAnalytics,
	type Lead,
	type Sandbox,
	type SandboxOptions,
} from '../sandbox/server';
import {
	executeWorkflow,
	exportNodes,
	freePort,
	importCredentials,
	importWorkflows,
	N8nServer,
	packAndInstall,
	provision,
	PROJECT_ROOT,
	reportOrClean,
	type ExecuteResult,
	type ExportedNodeType,
	type N8nOptions,
	type Runtime,
} from '../n8n/runtime';
import {
	backlogTriggerWorkflow,
	CASES,
	CREDENTIAL,
	TRIGGER_WORKFLOW_ID,
	triggerWorkflow,
	type WorkflowJson,
} from './workflows';

export const OWNER = {
	email: 'e2e-owner@example.com',
	password: `E2e-${randomBytes(9).toString('base64url')}1`,
	firstName: 'E2E',
	lastName: 'Owner',
};

export interface World {
	runtime: Runtime;
	sandbox: Sandbox;
	n8n: N8nServer;
	options: N8nOptions;
	/** n8n public API key (never printed). */
	apiKey: string;
	userFolder: string;
	exportedNodes: ExportedNodeType[];
	/** The lead the trigger workflow watches. */
	triggerLeadId: string;
	/** The lead the backlog trigger workflow watches (published only by its test). */
	backlogLeadId: string;
	/** Ids of the example workflows imported from examples/. */
	exampleIds: string[];
	/** The examples run with `n8n execute` (before `n8n start`: see startWorld). */
	exampleRuns: Record<string, ExampleRun>;
	timings: Record<string, number>;
}

export const EXAMPLES_DIR = path.join(PROJECT_ROOT, 'examples');
/**
 * The examples `n8n execute` runs here (the trigger tests cover the one starting with the polling trigger;
 * sync-example.test.ts runs the sync example, twice).
 */
export const EXECUTED_EXAMPLES = ['OutreachExReport'];

export function readExamples(): WorkflowJson[] {
	return fs
		.readdirSync(EXAMPLES_DIR)
		.filter((file) => file.endsWith('.json'))
		.sort()
		.map(
			(file) => JSON.parse(fs.readFileSync(path.join(EXAMPLES_DIR, file), 'utf8')) as WorkflowJson,
		);
}

/** Seed: 250 leads, so "Return All" at 100 per page takes three pages. */
export const SANDBOX_OPTIONS: Partial<SandboxOptions> = {
	seed: { leads: 250, campaigns: 6, messages: 400, seed: 7 },
	// The pacing logic is proven by the engine tests and the benchmarks; here it would only slow the run,
	// except in the one test that lowers the limit. Short windows: a lowered limit bites at once.
	rateLimit: 100_000,
	windowMs: 2_000,
};

export interface ExampleRun {
	/** The run data `n8n execute` printed, or the error it failed with. */
	run?: ExecuteResult;
	error?: Error;
	/** Sandbox data captured right after the run (before any other test changes it). */
	after: {
		newCampaigns: Campaign[];
		campaigns: Campaign[];
		analytics: Record<string, CampaignAnalytics>;
		leads: Lead[];
	};
}

let world: World | undefined;

async function timed<T>(
	timings: Record<string, number>,
	name: string,
	step: () => Promise<T>,
): Promise<T> {
	const started = Date.now();
	try {
		return await step();
	} finally {
		timings[name] = Date.now() - started;
	}
}

export async function startWorld(): Promise<World> {
	const timings: Record<string, number> = {};
	const started = Date.now();
	const userFolder = fs.mkdtempSync(path.join(os.tmpdir(), 'outreach-e2e-'));
	let sandbox: Sandbox | undefined;
	let n8n: N8nServer | undefined;
	// Under jest, Ctrl+C and a vanished parent are handled by test/e2e/environment.js; it names this folder.
	(globalThis as { __outreachE2eUserFolder?: string }).__outreachE2eUserFolder = userFolder;
	try {
		const runtime = await timed(timings, 'provision', () => provision());
		sandbox = await startSandbox({
			...SANDBOX_OPTIONS,
			apiKeys: [`e2e-${randomBytes(12).toString('hex')}`],
		});
		const triggerLeadId = sandbox.store.addLead({
			first_name: 'Tess',
			last_name: 'Trigger',
			company: 'Polling Inc',
		}).id;
		const backlogLeadId = sandbox.store.addLead({
			first_name: 'Bea',
			last_name: 'Backlog',
			company: 'Queue Ltd',
		}).id;
		// An old conversation: the trigger must not emit it on activation.
		sandbox.insertMessages({ count: 2, lead_id: triggerLeadId });
		sandbox.reply({ lead_id: triggerLeadId, body: 'An old reply from before activation' });

		const options: N8nOptions = {
			userFolder,
			port: await freePort(),
			brokerPort: await freePort(),
		};
		await timed(timings, 'packAndInstall', () => packAndInstall(userFolder));
		await timed(timings, 'importCredentials', () =>
			importCredentials(runtime, options, [
				{
					...CREDENTIAL,
					type: 'outreachAutomationApi',
					data: { baseUrl: sandbox!.url, apiKey: sandbox!.apiKey },
				},
			]),
		);
		const examples = readExamples();
		const caseWorkflows = Object.values(CASES).map((c) => c.workflow);
		await timed(timings, 'importWorkflows', () =>
			importWorkflows(runtime, options, [
				...caseWorkflows,
				triggerWorkflow(triggerLeadId),
				backlogTriggerWorkflow(backlogLeadId),
				...examples,
			]),
		);
		const exportedNodes = await timed(timings, 'exportNodes', () => exportNodes(runtime, options));
		// Run the examples now, while no n8n is running: an `n8n execute` next to a running `n8n start` on the
		// same database also brings up the published triggers in the execute process (seen with 2.41.1: the
		// trigger workflow polled from both and logged failed polls when the execute process exited).
		const exampleRuns: Record<string, ExampleRun> = {};
		await timed(timings, 'executeExamples', async () => {
			for (const id of EXECUTED_EXAMPLES) {
				const before = new Set(sandbox!.store.campaigns.keys());
				const run = await executeWorkflow(runtime, options, id).then(
					(result) => ({ run: result }),
					(error: Error) => ({ error }),
				);
				const campaigns = structuredClone([...sandbox!.store.campaigns.values()]);
				exampleRuns[id] = {
					...run,
					after: {
						campaigns,
						newCampaigns: campaigns.filter((c) => !before.has(c.id)),
						analytics: Object.fromEntries(
							campaigns.map((c) => [c.id, sandbox!.store.analytics(c)]),
						),
						leads: structuredClone([...sandbox!.store.leads.values()]),
					},
				};
			}
		});

		n8n = new N8nServer(runtime, options);
		await timed(timings, 'n8nStart', () => n8n!.start());
		await n8n.ensureOwner(OWNER);
		const apiKey = await n8n.createApiKey('e2e');
		await timed(timings, 'publish', () =>
			n8n!.publish(apiKey, [...caseWorkflows.map((w) => w.id), TRIGGER_WORKFLOW_ID]),
		);
		timings.setupTotal = Date.now() - started;
		world = {
			runtime,
			sandbox,
			n8n,
			options,
			apiKey,
			userFolder,
			exportedNodes,
			triggerLeadId,
			backlogLeadId,
			exampleIds: examples.map((e) => e.id),
			exampleRuns,
			timings,
		};
		return world;
	} catch (error) {
		await n8n?.stop();
		await sandbox?.stop();
		process.stderr.write(
			`\n[e2e] setup failed; n8n user folder kept for inspection: ${userFolder}\n`,
		);
		throw error;
	}
}

/** Stops everything; on failure prints n8n's log tail and keeps the user folder. */
export async function stopWorld(failed: boolean): Promise<void> {
	const current = world;
	world = undefined;
	if (!current) return;
	await current.n8n.stop();
	await current.sandbox.stop();
	reportOrClean('e2e', current.n8n, current.userFolder, failed);
}

/** Sequence number of the sandbox's last logged request: pass it to `requestsSince`. */
export function mark(sandbox: Sandbox): number {
	const log = sandbox.requests();
	return log.length ? log[log.length - 1].seq : 0;
}
