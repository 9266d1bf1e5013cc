/**
 * n8n's closed-off environment (n8nEnv) and its CLI commands: import credentials and workflows, execute a
 * workflow, export the node types.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

import { ENCRYPTION_KEY, HOST, type Runtime } from './config';
import { CommandError, run, type RunResult } from './processes';

// ---------------------------------------------------------------------------------------------------------
// n8n's environment and CLI

export interface N8nOptions {
	/** N8N_USER_FOLDER: n8n keeps its database, settings and installed packages in `<userFolder>/.n8n`. */
	userFolder: string;
	/** The editor and REST port. */
	port: number;
	/** The task runners' broker port (n8n's default 5679 would clash between two instances). */
	brokerPort: number;
	/** Where `n8n start` writes its output (default `<userFolder>/n8n.log`). */
	logFile?: string;
	/** Extra environment, applied last. */
	env?: Record<string, string>;
}

/** Variables of the calling process that must not leak into n8n (jest's NODE_ENV=test breaks n8n's loader). */
const DROP_ENV =
	/^(N8N_|DB_|NODE_ENV$|NODE_OPTIONS$|JEST_|TS_NODE_|npm_|EXECUTIONS_|QUEUE_|WEBHOOK_URL$|GENERIC_TIMEZONE$)/;

export function n8nEnv(runtime: Runtime, options: N8nOptions): NodeJS.ProcessEnv {
	const inherited = Object.fromEntries(
		Object.entries(process.env).filter(([name]) => !DROP_ENV.test(name)),
	);
	const noProxy = [inherited.NO_PROXY, inherited.no_proxy, '127.0.0.1', 'localhost']
		.filter(Boolean)
		.join(',');
	return {
		...inherited,
		PATH: `${path.join(runtime.nodeHome, 'bin')}${path.delimiter}${process.env.PATH ?? ''}`,
		NODE_ENV: 'production',
		// What this n8n version needs (versions.json), before our own settings.
		...runtime.env,
		NO_PROXY: noProxy,
		no_proxy: noProxy,
		N8N_USER_FOLDER: options.userFolder,
		N8N_ENCRYPTION_KEY: ENCRYPTION_KEY,
		DB_TYPE: 'sqlite',
		N8N_PORT: String(options.port),
		N8N_HOST: HOST,
		N8N_LISTEN_ADDRESS: HOST,
		N8N_PROTOCOL: 'http',
		N8N_RUNNERS_BROKER_PORT: String(options.brokerPort),
		N8N_RUNNERS_BROKER_LISTEN_ADDRESS: HOST,
		N8N_SECURE_COOKIE: 'false',
		// Nothing may call n8n's servers (or any other): no telemetry, update checks, templates, banners
		// (and, on 2.x, no MCP registry: versions.json).
		N8N_DIAGNOSTICS_ENABLED: 'false',
		N8N_VERSION_NOTIFICATIONS_ENABLED: 'false',
		N8N_TEMPLATES_ENABLED: 'false',
		N8N_PERSONALIZATION_ENABLED: 'false',
		N8N_HIRING_BANNER_ENABLED: 'false',
		N8N_DYNAMIC_BANNERS_ENABLED: 'false',
		N8N_VERIFIED_PACKAGES_ENABLED: 'false',
		// The sandbox listens on 127.0.0.1, which n8n's SSRF protection blocks: leave it off.
		N8N_SSRF_PROTECTION_ENABLED: 'false',
		N8N_LOG_FORMAT: 'json',
		N8N_LOG_LEVEL: 'info',
		N8N_GRACEFUL_SHUTDOWN_TIMEOUT: '5',
		N8N_PUBLIC_API_SWAGGERUI_DISABLED: 'true',
		...options.env,
	};
}

/** Runs `n8n <args>` (import:*, export:*, publish:*, execute...) against the user folder. */
export async function n8nCli(
	runtime: Runtime,
	options: N8nOptions,
	args: string[],
	timeoutMs = 180_000,
): Promise<RunResult> {
	fs.mkdirSync(options.userFolder, { recursive: true });
	return run(runtime.nodeBin, [runtime.n8nEntry, ...args], {
		env: n8nEnv(runtime, options),
		timeoutMs,
	});
}

/** Imports credentials in n8n's JSON array format (plain `data` is encrypted with the key on import). */
export async function importCredentials(
	runtime: Runtime,
	options: N8nOptions,
	credentials: unknown[],
): Promise<void> {
	const file = path.join(options.userFolder, `credentials-${randomUUID()}.json`);
	fs.writeFileSync(file, JSON.stringify(credentials), { mode: 0o600 });
	try {
		await n8nCli(runtime, options, ['import:credentials', `--input=${file}`]);
	} finally {
		fs.rmSync(file, { force: true });
	}
}

/** Imports workflows (each with an explicit `id`) in one n8n run. */
export async function importWorkflows(
	runtime: Runtime,
	options: N8nOptions,
	workflows: unknown[],
): Promise<void> {
	const dir = fs.mkdtempSync(path.join(options.userFolder, 'workflows-'));
	try {
		workflows.forEach((workflow, index) =>
			fs.writeFileSync(
				path.join(dir, `${String(index).padStart(3, '0')}.json`),
				JSON.stringify(workflow, null, 2),
			),
		);
		await n8nCli(runtime, options, ['import:workflow', '--separate', `--input=${dir}`]);
	} finally {
		fs.rmSync(dir, { recursive: true, force: true });
	}
}

export interface ExecuteResult {
	data: {
		resultData: {
			error?: { message?: string; description?: string };
			runData: Record<
				string,
				Array<{
					error?: { message?: string };
					data?: {
						main: Array<
							Array<{
								json: Record<string, unknown>;
								binary?: Record<string, { fileName?: string; mimeType?: string }>;
							}>
						>;
					};
				}>
			>;
		};
	};
	status?: string;
	[key: string]: unknown;
}

/**
 * `n8n execute --id=<id> --rawOutput` (about 5 s: a whole n8n boots for it). Works while `n8n start` runs on
 * the same user folder if `options.brokerPort` differs. Returns the run (with N8N_LOG_FORMAT=json it is the
 * log line whose message is JSON).
 */
export async function executeWorkflow(
	runtime: Runtime,
	options: N8nOptions,
	workflowId: string,
): Promise<ExecuteResult> {
	const result = await n8nCli(
		runtime,
		options,
		['execute', `--id=${workflowId}`, '--rawOutput'],
		180_000,
	);
	for (const line of result.stdout.split('\n')) {
		try {
			const entry = JSON.parse(line) as { message?: unknown };
			if (typeof entry.message === 'string' && entry.message.trimStart().startsWith('{'))
				return JSON.parse(entry.message) as ExecuteResult;
		} catch {
			// not a JSON line
		}
	}
	throw new CommandError(`n8n execute --id=${workflowId} printed no run data`, result);
}

export interface ExportedNodeType {
	name: string;
	displayName: string;
	version: number | number[];
	credentials?: Array<{ name: string }>;
	[key: string]: unknown;
}

/** `n8n export:nodes`: the node types this n8n has loaded. */
export async function exportNodes(
	runtime: Runtime,
	options: N8nOptions,
): Promise<ExportedNodeType[]> {
	const file = path.join(options.userFolder, `nodes-${randomUUID()}.json`);
	try {
		await n8nCli(runtime, options, ['export:nodes', `--output=${file}`]);
		return JSON.parse(fs.readFileSync(file, 'utf8')) as ExportedNodeType[];
	} finally {
		fs.rmSync(file, { force: true });
	}
}
