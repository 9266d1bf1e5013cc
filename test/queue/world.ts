/**
 * The world of the queue-mode test: Redis and a throwaway PostgreSQL, the sandbox behind a per-process
 * forwarder, one user folder with the packed package (shared by all n8n processes: the database is
 * PostgreSQL, the folder only holds the installed package, settings and logs), one `n8n start` (main:
 * editor, webhooks, triggers) and two `n8n worker` processes running the executions.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ChildProcess } from 'node:child_process';

import { startSandbox, type Sandbox } from '../sandbox/server';
import {
	freePort,
	HOST,
	importCredentials,
	importWorkflows,
	N8nServer,
	n8nEnv,
	packAndInstall,
	provision,
	spawnTracked,
	stopProcess,
	tail,
	type N8nOptions,
	type Runtime,
} from '../n8n/runtime';
import { expr, outreachNode, webhookNode, workflow, type NodeJson } from '../n8n/workflow-json';
import { CASES, CREDENTIAL, TRIGGER_WORKFLOW_ID, triggerWorkflow } from '../e2e/workflows';
import { startForwarder, type Forwarder } from './forwarder';
import { ensureTools, startPostgres, startRedis, type Service } from './services';

export const WORKER_CONCURRENCY = 3;
export const LEAD_WORKFLOWS = 6;
export const leadPath = (i: number) => `queue-leads-${i}`;
export const SEND_PATH = CASES.messageSendEach.path;
export const SEND_WORKFLOW_ID = CASES.messageSendEach.id;

/** The API's real limit (100 a minute) compressed in time: 100 per 2 s window. */
export const RATE_LIMIT = 100;
export const WINDOW_MS = 2_000;

const OWNER = {
	email: 'queue-owner@example.com',
	password: `Queue-${randomBytes(9).toString('base64url')}1`,
	firstName: 'Queue',
	lastName: 'Owner',
};

export interface Worker {
	name: string;
	child: ChildProcess;
	logFile: string;
	killed: boolean;
}

export interface QueueWorld {
	runtime: Runtime;
	/** main's log (the workers' are in `workers`). */
	mainLogFile: string;
	sandbox: Sandbox;
	forwarder: Forwarder;
	main: N8nServer;
	workers: Worker[];
	apiKey: string;
	triggerLeadId: string;
	/** A reply that existed before the trigger was published: never emitted. */
	oldReplyId: string;
	baseDir: string;
	userFolder: string;
	timings: Record<string, number>;
}

/** Webhook -> Split Out(body.items) -> Outreach Automation: create a lead per item, Continue On Fail. */
function leadWorkflow(i: number) {
	const split: NodeJson = {
		id: `queue-split-${i}`,
		name: 'Split Out',
		type: 'n8n-nodes-base.splitOut',
		typeVersion: 1,
		position: [220, 0],
		parameters: { fieldToSplitOut: 'body.items', options: {} },
	};
	const create = outreachNode(
		CREDENTIAL,
		{
			resource: 'lead',
			operation: 'create',
			firstName: expr('$json.firstName'),
			lastName: expr('$json.lastName'),
			company: expr('$json.company'),
			additionalFields: {},
		},
		[440, 0],
		{ onError: 'continueRegularOutput' },
	);
	return workflow(`queueLeads${i}`, `queue: create leads ${i}`, [
		webhookNode(leadPath(i)),
		split,
		create,
	]);
}

let current: QueueWorld | undefined;
let services: Service[] = [];

async function timed<T>(timings: Record<string, number>, name: string, step: () => Promise<T>) {
	const started = Date.now();
	try {
		return await step();
	} finally {
		timings[name] = Date.now() - started;
	}
}

async function waitWorkerReady(worker: Worker, port: number, timeoutMs = 180_000): Promise<void> {
	const deadline = Date.now() + timeoutMs;
	while (Date.now() < deadline) {
		if (worker.child.exitCode !== null)
			throw new Error(
				`${worker.name} exited with ${worker.child.exitCode}:\n${logTail(worker.logFile)}`,
			);
		try {
			const ready = await fetch(`http://${HOST}:${port}/healthz/readiness`, {
				signal: AbortSignal.timeout(2_000),
			});
			if (ready.ok) return;
		} catch {
			// not listening yet
		}
		await sleep(250);
	}
	throw new Error(
		`${worker.name} not ready after ${timeoutMs / 1000} s:\n${logTail(worker.logFile)}`,
	);
}

export function logTail(file: string, lines = 40): string {
	try {
		return tail(fs.readFileSync(file, 'utf8'), lines);
	} catch {
		return '(no log)';
	}
}

export async function startQueueWorld(): Promise<QueueWorld> {
	const timings: Record<string, number> = {};
	const started = Date.now();
	const baseDir = fs.mkdtempSync(path.join(os.tmpdir(), 'outreach-queue-'));
	const userFolder = path.join(baseDir, 'n8n');
	fs.mkdirSync(userFolder);
	(globalThis as { __outreachE2eUserFolder?: string }).__outreachE2eUserFolder = userFolder;
	let sandbox: Sandbox | undefined;
	let forwarder: Forwarder | undefined;
	let main: N8nServer | undefined;
	const workers: Worker[] = [];
	try {
		const runtime = await timed(timings, 'provision', () => provision());
		const tools = await timed(timings, 'tools', () => ensureTools());
		const [redis, postgres] = await timed(timings, 'redisAndPostgres', () =>
			Promise.all([
				startRedis(tools, path.join(baseDir, 'redis')),
				startPostgres(tools, path.join(baseDir, 'postgres')),
			]),
		);
		services = [redis, postgres];

		sandbox = await startSandbox({
			seed: { leads: 40, campaigns: 2, messages: 40, seed: 11 },
			rateLimit: RATE_LIMIT,
			windowMs: WINDOW_MS,
			apiKeys: [`queue-${randomBytes(12).toString('hex')}`],
		});
		forwarder = await startForwarder(sandbox.url, ['main', 'worker1', 'worker2']);
		const triggerLeadId = sandbox.store.addLead({
			first_name: 'Quinn',
			last_name: 'Queue',
			company: 'Trigger Inc',
		}).id;
		// An old conversation: the trigger must not emit it on activation.
		const oldReplyId = sandbox.reply({
			lead_id: triggerLeadId,
			body: 'A reply from before activation',
		}).id;

		// Shared by every n8n process: queue mode on Redis, the database on PostgreSQL.
		const shared: Record<string, string> = {
			EXECUTIONS_MODE: 'queue',
			QUEUE_BULL_REDIS_HOST: HOST,
			QUEUE_BULL_REDIS_PORT: String(redis.port),
			DB_TYPE: 'postgresdb',
			DB_POSTGRESDB_HOST: HOST,
			DB_POSTGRESDB_PORT: String(postgres.port),
			DB_POSTGRESDB_DATABASE: 'postgres',
			DB_POSTGRESDB_USER: postgres.user,
			DB_POSTGRESDB_PASSWORD: '',
			// The credential's Base URL reads OUTREACH_QUEUE_BASE_URL: one forwarder port per process.
			N8N_BLOCK_ENV_ACCESS_IN_NODE: 'false',
			// A killed worker's job: its lock lapses after 10 s (n8n: 60 s) and the stalled check runs every 5 s
			// (n8n: 30 s); main's recovery of dangling executions every 15 s (n8n: 3 h). Same behaviour, sooner.
			QUEUE_WORKER_LOCK_DURATION: '10000',
			QUEUE_WORKER_LOCK_RENEW_TIME: '2000',
			QUEUE_WORKER_STALLED_INTERVAL: '5000',
			N8N_EXECUTIONS_QUEUE_RECOVERY_INTERVAL: '0.25',
			// n8n names each package it loads, with its node and credential counts, only at debug level: the
			// test reads that line in every process's log.
			N8N_LOG_LEVEL: 'debug',
		};
		const mainOptions: N8nOptions = {
			userFolder,
			port: await freePort(),
			brokerPort: await freePort(),
			logFile: path.join(userFolder, 'main.log'),
			env: { ...shared, OUTREACH_QUEUE_BASE_URL: forwarder.urls.main },
		};
		await timed(timings, 'packAndInstall', () => packAndInstall(userFolder));
		await timed(timings, 'importCredentials', () =>
			importCredentials(runtime, mainOptions, [
				{
					...CREDENTIAL,
					type: 'outreachAutomationApi',
					data: { baseUrl: '={{ $env.OUTREACH_QUEUE_BASE_URL }}', apiKey: sandbox!.apiKey },
				},
			]),
		);
		const leadWorkflows = Array.from({ length: LEAD_WORKFLOWS }, (_, i) => leadWorkflow(i));
		await timed(timings, 'importWorkflows', () =>
			importWorkflows(runtime, mainOptions, [
				...leadWorkflows,
				CASES.messageSendEach.workflow,
				triggerWorkflow(triggerLeadId),
			]),
		);

		main = new N8nServer(runtime, mainOptions);
		// The imports above migrated the database: main and the workers can start side by side.
		await timed(timings, 'startMainAndWorkers', async () => {
			await Promise.all([
				main!.start(),
				...['worker1', 'worker2'].map(async (name) => {
					const healthPort = await freePort();
					const options: N8nOptions = {
						userFolder,
						port: await freePort(),
						brokerPort: await freePort(),
						env: {
							...shared,
							OUTREACH_QUEUE_BASE_URL: forwarder!.urls[name],
							QUEUE_HEALTH_CHECK_ACTIVE: 'true',
							QUEUE_HEALTH_CHECK_PORT: String(healthPort),
							QUEUE_HEALTH_CHECK_ADDRESS: HOST,
						},
					};
					const logFile = path.join(userFolder, `${name}.log`);
					const child = spawnTracked(
						runtime.nodeBin,
						[runtime.n8nEntry, 'worker', `--concurrency=${WORKER_CONCURRENCY}`],
						{ env: n8nEnv(runtime, options), cwd: userFolder, logFile },
					);
					const worker: Worker = { name, child, logFile, killed: false };
					workers.push(worker);
					await waitWorkerReady(worker, healthPort);
				}),
			]);
		});
		await main.ensureOwner(OWNER);
		const apiKey = await main.createApiKey('queue');
		await timed(timings, 'publish', () =>
			main!.publish(apiKey, [
				...leadWorkflows.map((w) => w.id),
				SEND_WORKFLOW_ID,
				TRIGGER_WORKFLOW_ID,
			]),
		);
		timings.setupTotal = Date.now() - started;
		current = {
			runtime,
			mainLogFile: mainOptions.logFile!,
			sandbox,
			forwarder,
			main,
			workers,
			apiKey,
			triggerLeadId,
			oldReplyId,
			baseDir,
			userFolder,
			timings,
		};
		return current;
	} catch (error) {
		current = {
			sandbox,
			forwarder,
			main,
			workers,
			baseDir,
			userFolder,
			timings,
		} as unknown as QueueWorld;
		await stopQueueWorld(true);
		throw error;
	}
}

/** Stops every process and service and deletes the data; on failure keeps the n8n folder (logs) and says so. */
export async function stopQueueWorld(failed: boolean): Promise<void> {
	const world = current;
	current = undefined;
	if (!world) return;
	if (failed) {
		for (const [name, file] of [
			['main', path.join(world.userFolder, 'main.log')],
			...world.workers.map((w) => [w.name, w.logFile]),
		])
			process.stderr.write(
				`\n[queue] last lines of ${name}'s log (${file}):\n${logTail(file, 30)}\n`,
			);
	}
	await Promise.allSettled([world.main?.stop(), ...world.workers.map((w) => stopProcess(w.child))]);
	await world.forwarder?.stop();
	await world.sandbox?.stop();
	await Promise.allSettled(services.map((s) => s.stop()));
	services = [];
	if (failed) {
		for (const dir of ['postgres', 'redis'])
			fs.rmSync(path.join(world.baseDir, dir), { recursive: true, force: true });
		process.stderr.write(`\n[queue] n8n folder with the logs kept: ${world.userFolder}\n`);
	} else {
		fs.rmSync(world.baseDir, { recursive: true, force: true });
	}
}
