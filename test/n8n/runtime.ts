/**
 * The real-n8n runtime shared by the playground (`npm run dev`), the end-to-end tests (`npm run test:e2e`)
 * and the benchmarks: provision the pinned n8n, install the packed package into a user folder the way users
 * get it, run n8n CLI commands and `n8n start` with a closed-off environment, and stop every process it
 * started on exit, on Ctrl+C and on failure.
 *
 * Runs on the project's Node (20 or later); n8n itself runs on the provisioned Node 24.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { provisionRuntime, selectedN8nVersion, type Provisioned } from './provision';

export { NODE_VERSION } from './provision';
export const PROJECT_ROOT = path.resolve(__dirname, '..', '..');
export const PACKAGE_NAME = 'n8n-nodes-outreach-automation';
/** The n8n this process runs: OUTREACH_N8N_VERSION, or the default pinned in versions.json. */
export const N8N_VERSION = selectedN8nVersion();
/** The n8n major line (1 or 2): the REST and CLI calls that differ between them branch on it. */
export const N8N_MAJOR = Number(N8N_VERSION.split('.')[0]);
export const HOST = '127.0.0.1';
/**
 * Fixed, so credentials imported with plain data stay readable across restarts of the same user folder.
 * Local only: it protects nothing but test and playground data.
 */
export const ENCRYPTION_KEY = 'outreach-automation-local-playground-key';

/** Node types as n8n knows them once the package is installed. */
export const NODE_TYPES = {
	action: `${PACKAGE_NAME}.outreachAutomation`,
	tool: `${PACKAGE_NAME}.outreachAutomationTool`,
	trigger: `${PACKAGE_NAME}.outreachAutomationTrigger`,
} as const;
export const CREDENTIAL_TYPE = 'outreachAutomationApi';

// ---------------------------------------------------------------------------------------------------------
// Processes: every child is started in its own process group and killed with it.

const children = new Set<ChildProcess>();
/**
 * Process group ids of the children still running, on the global object: under jest the test's `process`
 * is a sandboxed copy whose signal and exit handlers never fire, so the e2e test environment
 * (test/e2e/environment.js) reads this set to clean up on Ctrl+C and at teardown.
 */
const liveGroups: Set<number> = ((
	globalThis as { __outreachChildGroups?: Set<number> }
).__outreachChildGroups ??= new Set());
const watchdogs = new Map<ChildProcess, ChildProcess>();

function track(child: ChildProcess): void {
	children.add(child);
	if (child.pid !== undefined) liveGroups.add(child.pid);
	watchdogs.set(child, watchdog(child));
	child.once('exit', () => untrack(child));
}

function untrack(child: ChildProcess): void {
	children.delete(child);
	if (child.pid !== undefined) liveGroups.delete(child.pid);
	const dog = watchdogs.get(child);
	watchdogs.delete(child);
	if (dog?.pid !== undefined) {
		try {
			process.kill(-dog.pid, 'SIGKILL');
		} catch {
			// already gone
		}
	}
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
	if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
	try {
		process.kill(-child.pid, signal);
	} catch {
		try {
			child.kill(signal);
		} catch {
			// already gone
		}
	}
}

/** Last resort: synchronous, so it also runs from process.on('exit'). */
export function killAllNow(): void {
	for (const child of [...children]) {
		killGroup(child, 'SIGKILL');
		untrack(child);
	}
}
process.on('exit', killAllNow);

/** Stops a process group: SIGTERM, then SIGKILL after `graceMs`. Resolves once the leader has exited. */
export async function stopProcess(child: ChildProcess, graceMs = 10_000): Promise<void> {
	if (child.exitCode !== null || child.signalCode !== null) {
		untrack(child);
		return;
	}
	const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
	killGroup(child, 'SIGTERM');
	const timer = setTimeout(() => killGroup(child, 'SIGKILL'), graceMs);
	await exited;
	clearTimeout(timer);
	// Children of the leader (n8n's task runner) may outlive it for a moment: make sure the group is gone.
	try {
		process.kill(-child.pid!, 'SIGKILL');
	} catch {
		// the group is gone
	}
	untrack(child);
}

/**
 * A watchdog for `child`: if this process dies without cleaning up (SIGKILL, jest killed), it kills the
 * child's process group, so no orphaned n8n keeps a port busy or spins on a deleted folder.
 */
function watchdog(child: ChildProcess): ChildProcess {
	const script =
		'while kill -0 "$1" 2>/dev/null && kill -0 "$2" 2>/dev/null; do sleep 1; done; ' +
		'if kill -0 "$2" 2>/dev/null; then kill -TERM -"$2" 2>/dev/null; sleep 5; kill -KILL -"$2" 2>/dev/null; fi';
	const dog = spawn('sh', ['-c', script, 'watchdog', String(process.pid), String(child.pid)], {
		detached: true,
		stdio: 'ignore',
	});
	dog.unref();
	return dog;
}

/**
 * Starts a long-running process (a database, a queue, an n8n worker) in its own process group, tracked like
 * every other child: killed with its group on exit, on Ctrl+C and by the watchdog if this process dies.
 */
export function spawnTracked(
	command: string,
	args: string[],
	options: { cwd?: string; env?: NodeJS.ProcessEnv; logFile: string; uid?: number; gid?: number },
): ChildProcess {
	fs.mkdirSync(path.dirname(options.logFile), { recursive: true });
	const log = fs.openSync(options.logFile, 'a');
	const child = spawn(command, args, {
		cwd: options.cwd ?? PROJECT_ROOT,
		env: options.env ?? process.env,
		detached: true,
		stdio: ['ignore', log, log],
		uid: options.uid,
		gid: options.gid,
	});
	fs.closeSync(log);
	track(child);
	return child;
}

export interface RunResult {
	code: number;
	stdout: string;
	stderr: string;
}

/** Runs a command to completion in its own process group; rejects with its output on failure or timeout. */
export async function run(
	command: string,
	args: string[],
	options: {
		cwd?: string;
		env?: NodeJS.ProcessEnv;
		timeoutMs?: number;
		stderr?: 'pipe' | 'inherit';
		check?: boolean;
	} = {},
): Promise<RunResult> {
	const child = spawn(command, args, {
		cwd: options.cwd ?? PROJECT_ROOT,
		env: options.env ?? process.env,
		detached: true,
		stdio: ['ignore', 'pipe', options.stderr ?? 'pipe'],
	});
	track(child);
	let stdout = '';
	let stderr = '';
	child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
	child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
	const timeoutMs = options.timeoutMs ?? 120_000;
	let timedOut = false;
	const timer = setTimeout(() => {
		timedOut = true;
		killGroup(child, 'SIGKILL');
	}, timeoutMs);
	const code = await new Promise<number>((resolve, reject) => {
		child.once('error', reject);
		child.once('close', (exitCode, signal) => resolve(exitCode ?? (signal ? 128 : 1)));
	}).finally(() => {
		clearTimeout(timer);
		untrack(child);
	});
	const result = { code, stdout, stderr };
	if (timedOut)
		throw new CommandError(
			`${path.basename(command)} ${args.join(' ')} timed out after ${timeoutMs} ms`,
			result,
		);
	if (code !== 0 && options.check !== false) {
		throw new CommandError(
			`${path.basename(command)} ${args.join(' ')} exited with ${code}`,
			result,
		);
	}
	return result;
}

export class CommandError extends Error {
	constructor(
		message: string,
		readonly result: RunResult,
	) {
		super(`${message}\n${tail(`${result.stdout}\n${result.stderr}`, 40)}`);
	}
}

/** The last `lines` lines of a text. */
export function tail(text: string, lines = 60): string {
	return text.trimEnd().split('\n').slice(-lines).join('\n');
}

// ---------------------------------------------------------------------------------------------------------
// Provisioning

export type Runtime = Provisioned;

/**
 * Provisions Node 24 and the chosen n8n (minutes the first time, about a second afterwards) and verifies
 * them. Its progress goes to this process's stderr unless `quiet`.
 */
export async function provision(options: { quiet?: boolean } = {}): Promise<Runtime> {
	return provisionRuntime({
		n8nVersion: N8N_VERSION,
		log: options.quiet ? () => undefined : undefined,
	});
}

// ---------------------------------------------------------------------------------------------------------
// The package, as users get it

/** Fails with a clear message when dist/ is missing or stale: the package is built from it. */
export function assertBuilt(): void {
	const manifest = JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8'));
	const files: string[] = [...manifest.n8n.nodes, ...manifest.n8n.credentials];
	const missing = files.filter((file) => !fs.existsSync(path.join(PROJECT_ROOT, file)));
	if (missing.length) {
		throw new Error(
			`The package is not built (missing ${missing.join(', ')}): run \`npm run build\` first.`,
		);
	}
	for (const file of files) {
		const source = path.join(PROJECT_ROOT, file.replace(/^dist\//, '').replace(/\.js$/, '.ts'));
		if (
			fs.existsSync(source) &&
			fs.statSync(source).mtimeMs > fs.statSync(path.join(PROJECT_ROOT, file)).mtimeMs
		) {
			throw new Error(`${file} is older than its source: run \`npm run build\` first.`);
		}
	}
}

/** `npm pack` of the project into `destDir`; returns the tarball's path. */
export async function packPackage(destDir: string): Promise<string> {
	assertBuilt();
	fs.mkdirSync(destDir, { recursive: true });
	const { stdout } = await run(
		'npm',
		['pack', '--json', '--ignore-scripts', '--pack-destination', destDir],
		{
			env: { ...process.env, npm_config_loglevel: 'error' },
			timeoutMs: 120_000,
		},
	);
	const [{ filename }] = JSON.parse(stdout.slice(stdout.indexOf('['))) as Array<{
		filename: string;
	}>;
	return path.join(destDir, filename);
}

/** Where n8n looks for installed community packages. */
export function packageDir(userFolder: string): string {
	return path.join(userFolder, '.n8n', 'nodes', 'node_modules', PACKAGE_NAME);
}

/**
 * Unpacks the tarball into `<userFolder>/.n8n/nodes/node_modules/<package>/`, replacing any previous copy:
 * package.json and dist only, no node_modules (n8n-workflow comes from n8n itself).
 */
export async function installPackage(userFolder: string, tarball: string): Promise<string> {
	const target = packageDir(userFolder);
	fs.rmSync(target, { recursive: true, force: true });
	fs.mkdirSync(target, { recursive: true });
	await run('tar', ['-xzf', tarball, '-C', target, '--strip-components=1']);
	if (fs.existsSync(path.join(target, 'node_modules')))
		throw new Error('The packed package contains node_modules');
	return target;
}

/** Packs the project and installs it into the user folder; returns the installed package's folder. */
export async function packAndInstall(userFolder: string): Promise<string> {
	const packDir = fs.mkdtempSync(path.join(os.tmpdir(), 'outreach-pack-'));
	try {
		return await installPackage(userFolder, await packPackage(packDir));
	} finally {
		fs.rmSync(packDir, { recursive: true, force: true });
	}
}

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

// ---------------------------------------------------------------------------------------------------------
// Ports

/** A port free on 127.0.0.1 right now. */
export async function freePort(): Promise<number> {
	return new Promise((resolve, reject) => {
		const server = net.createServer();
		server.unref();
		server.once('error', reject);
		server.listen(0, HOST, () => {
			const { port } = server.address() as net.AddressInfo;
			server.close(() => resolve(port));
		});
	});
}

/** Throws a clear message when something already listens on the port. */
export async function assertPortFree(port: number, what: string): Promise<void> {
	await new Promise<void>((resolve, reject) => {
		const server = net.createServer();
		server.once('error', (error: NodeJS.ErrnoException) =>
			reject(
				new Error(
					error.code === 'EADDRINUSE'
						? `Port ${port} (${what}) is already in use on ${HOST}: stop what uses it or choose another port.`
						: `Cannot listen on ${HOST}:${port} (${what}): ${error.message}`,
				),
			),
		);
		server.listen(port, HOST, () => server.close(() => resolve()));
	});
}

// ---------------------------------------------------------------------------------------------------------
// A running n8n

export interface Owner {
	email: string;
	password: string;
	firstName: string;
	lastName: string;
}

export interface StartOptions {
	/** Give up waiting for readiness after this long (default 180 s). */
	timeoutMs?: number;
}

interface PublicationStatus {
	status: 'in_progress' | 'not_published' | 'published' | 'partial' | 'failed';
	triggers: Array<{ nodeId: string; status: string; errorMessage: string | null }>;
}

/** `n8n start` as a child process bound to 127.0.0.1, its output in a log file. */
export class N8nServer {
	readonly url: string;
	readonly logFile: string;
	private child?: ChildProcess;
	private exited?: Promise<number | null>;
	private stopRequested = false;
	private cookie?: string;
	private readonly browserId = randomUUID();
	/** Milliseconds from spawn to readiness, once started. */
	startupMs = 0;

	constructor(
		readonly runtime: Runtime,
		readonly options: N8nOptions,
	) {
		this.url = `http://${HOST}:${options.port}`;
		this.logFile = options.logFile ?? path.join(options.userFolder, 'n8n.log');
	}

	get pid(): number | undefined {
		return this.child?.pid;
	}

	/** Resolves with the exit code if n8n exits without stop() being called; never resolves otherwise. */
	unexpectedExit(): Promise<number | null> {
		const exited = this.exited;
		if (!exited) return new Promise(() => undefined);
		return exited.then((code) =>
			this.stopRequested ? new Promise<number | null>(() => undefined) : code,
		);
	}

	/** Starts n8n and waits until it answers its readiness check (polling, not sleeping a fixed time). */
	async start(options: StartOptions = {}): Promise<void> {
		if (this.child) throw new Error('n8n is already started');
		this.stopRequested = false;
		await assertPortFree(this.options.port, 'n8n editor');
		await assertPortFree(this.options.brokerPort, 'n8n task runner broker');
		fs.mkdirSync(path.dirname(this.logFile), { recursive: true });
		const log = fs.openSync(this.logFile, 'a');
		const started = Date.now();
		const child = spawn(this.runtime.nodeBin, [this.runtime.n8nEntry, 'start'], {
			env: n8nEnv(this.runtime, this.options),
			cwd: this.options.userFolder,
			detached: true,
			stdio: ['ignore', log, log],
		});
		fs.closeSync(log);
		this.child = child;
		track(child);
		this.exited = new Promise((resolve) => {
			child.once('exit', (code) => resolve(code));
			child.once('error', () => resolve(-1));
		});
		try {
			await this.waitReady(options.timeoutMs ?? 180_000);
		} catch (error) {
			await this.stop();
			throw error;
		}
		this.startupMs = Date.now() - started;
	}

	private async waitReady(timeoutMs: number): Promise<void> {
		const deadline = Date.now() + timeoutMs;
		let exitCode: number | null | undefined;
		void this.exited!.then((code) => (exitCode = code));
		while (Date.now() < deadline) {
			if (exitCode !== undefined) {
				throw new Error(
					`n8n exited with code ${exitCode} before it was ready. Its log (${this.logFile}):\n${this.logTail()}`,
				);
			}
			try {
				// Readiness comes first; n8n 1.x mounts its REST routes about 4 s later: wait for both.
				const ready = await fetch(`${this.url}/healthz/readiness`, {
					signal: AbortSignal.timeout(2_000),
				});
				if (ready.ok) {
					const settings = await fetch(`${this.url}/rest/settings`, {
						signal: AbortSignal.timeout(2_000),
					});
					if (settings.ok) return;
				}
			} catch {
				// not listening yet
			}
			await sleep(250);
		}
		throw new Error(
			`n8n was not ready after ${timeoutMs / 1000} s. Its log (${this.logFile}):\n${this.logTail()}`,
		);
	}

	/** Stops n8n and its task runner (the whole process group). */
	async stop(): Promise<void> {
		this.stopRequested = true;
		const child = this.child;
		this.child = undefined;
		if (child) await stopProcess(child);
	}

	/** The last lines of n8n's log, readable (JSON lines reduced to time, level and message). */
	logTail(lines = 80): string {
		let text = '';
		try {
			text = fs.readFileSync(this.logFile, 'utf8');
		} catch {
			return '(no log yet)';
		}
		return tail(text, lines)
			.split('\n')
			.map((line) => {
				try {
					const entry = JSON.parse(line) as {
						level?: string;
						message?: string;
						timestamp?: string;
					};
					if (typeof entry.message === 'string')
						return `${entry.timestamp ?? ''} ${entry.level ?? ''} ${entry.message}`.trim();
				} catch {
					// not JSON
				}
				return line;
			})
			.join('\n');
	}

	// ---- REST (the editor's API, with a session cookie) and the public API (with an API key)

	/** Calls the editor's REST API (/rest) with the session cookie; returns its `data`. */
	async rest<T = unknown>(method: string, route: string, body?: unknown): Promise<T> {
		return this.session<T>(method, `/rest${route}`, body);
	}

	/** Any path of the editor's server, signed in (e.g. /types/credentials.json). */
	async session<T = unknown>(
		method: string,
		urlPath: string,
		body?: unknown,
		headers: Record<string, string> = {},
	): Promise<T> {
		const response = await fetch(`${this.url}${urlPath}`, {
			method,
			headers: {
				'content-type': 'application/json',
				'browser-id': this.browserId,
				...(this.cookie ? { cookie: this.cookie } : {}),
				...headers,
			},
			body: body === undefined ? undefined : JSON.stringify(body),
		});
		const setCookie = response.headers.getSetCookie?.() ?? [];
		const auth = setCookie.find((c) => c.startsWith('n8n-auth='));
		if (auth) this.cookie = auth.split(';')[0];
		const text = await response.text();
		if (!response.ok)
			throw new Error(`${method} ${urlPath}: HTTP ${response.status} ${text.slice(0, 500)}`);
		const parsed = text ? JSON.parse(text) : {};
		return (parsed && typeof parsed === 'object' && 'data' in parsed ? parsed.data : parsed) as T;
	}

	/**
	 * Signs in as the owner, creating the owner account first if this n8n has none yet. Returns true when the
	 * account was created now.
	 */
	async ensureOwner(owner: Owner): Promise<boolean> {
		const settings = await this.rest<{ userManagement?: { showSetupOnFirstLoad?: boolean } }>(
			'GET',
			'/settings',
		);
		if (settings.userManagement?.showSetupOnFirstLoad) {
			await this.rest('POST', '/owner/setup', owner);
			return true;
		}
		await this.rest('POST', '/login', {
			emailOrLdapLoginId: owner.email,
			password: owner.password,
		});
		return false;
	}

	/** A public API key with every scope the owner may have (call ensureOwner first). */
	async createApiKey(label = `outreach-${Date.now()}`): Promise<string> {
		const scopes = await this.rest<string[]>('GET', '/api-keys/scopes');
		const created = await this.rest<{ rawApiKey: string }>('POST', '/api-keys', {
			label,
			scopes,
			expiresAt: null,
		});
		return created.rawApiKey;
	}

	/** Calls n8n's public API (/api/v1) with an API key. */
	async publicApi<T = unknown>(
		apiKey: string,
		method: string,
		route: string,
		body?: unknown,
	): Promise<T> {
		const response = await fetch(`${this.url}/api/v1${route}`, {
			method,
			headers: { 'content-type': 'application/json', 'x-n8n-api-key': apiKey },
			body: body === undefined ? undefined : JSON.stringify(body),
		});
		const text = await response.text();
		if (!response.ok)
			throw new Error(`${method} /api/v1${route}: HTTP ${response.status} ${text.slice(0, 500)}`);
		return (text ? JSON.parse(text) : {}) as T;
	}

	/**
	 * Publishes (activates) workflows and waits until every trigger is live. n8n 2.x activates through an
	 * outbox processed in the background, so its API answers before the webhooks and polls exist: wait for the
	 * publication status (needs the owner's session, see ensureOwner). n8n 1.x activates within the call.
	 */
	async publish(apiKey: string, workflowIds: string[], timeoutMs = 90_000): Promise<void> {
		if (N8N_MAJOR < 2) {
			for (const id of workflowIds) {
				const workflow = await this.publicApi<{ active?: boolean }>(
					apiKey,
					'POST',
					`/workflows/${encodeURIComponent(id)}/activate`,
				);
				if (workflow.active !== true)
					throw new Error(`Activating workflow ${id} did not make it active\n${this.logTail(30)}`);
			}
			return;
		}
		for (const id of workflowIds)
			await this.publicApi(apiKey, 'POST', `/workflows/${encodeURIComponent(id)}/publish`);
		const deadline = Date.now() + timeoutMs;
		const pending = new Set(workflowIds);
		while (pending.size) {
			for (const id of [...pending]) {
				const status = await this.rest<PublicationStatus>(
					'GET',
					`/workflows/${encodeURIComponent(id)}/publication-status`,
				);
				if (status.status === 'published') pending.delete(id);
				else if (status.status === 'failed' || status.status === 'partial') {
					const errors = status.triggers
						.map((t) => t.errorMessage)
						.filter(Boolean)
						.join('; ');
					throw new Error(
						`Publishing workflow ${id} failed: ${errors || status.status}\n${this.logTail(30)}`,
					);
				}
			}
			if (!pending.size) break;
			if (Date.now() > deadline)
				throw new Error(
					`Workflows not published after ${timeoutMs / 1000} s: ${[...pending].join(', ')}`,
				);
			await sleep(200);
		}
	}

	/** POSTs JSON to a production webhook; returns the status and the parsed answer. */
	async callWebhook<T = unknown>(
		webhookPath: string,
		body: unknown = {},
	): Promise<{ status: number; body: T }> {
		const response = await fetch(`${this.url}/webhook/${webhookPath}`, {
			method: 'POST',
			headers: { 'content-type': 'application/json' },
			body: JSON.stringify(body),
		});
		const text = await response.text();
		let parsed: unknown = text;
		try {
			parsed = JSON.parse(text);
		} catch {
			// not JSON
		}
		return { status: response.status, body: parsed as T };
	}
}

/**
 * Installs handlers so Ctrl+C, SIGTERM and SIGHUP run `cleanup` once, then exit with the signal's code. With
 * `orphanCheck`, it also cleans up when the parent process goes away: `npm run` killed with SIGTERM does not
 * pass the signal through its shell to us. Returns a function that removes the handlers.
 */
export function onSignals(
	cleanup: () => Promise<void>,
	options: { orphanCheck?: boolean } = {},
): () => void {
	let stopping = false;
	const shutdown = (code: number) => {
		if (stopping) {
			killAllNow();
			process.exit(code);
		}
		stopping = true;
		cleanup()
			.catch((error) => process.stderr.write(`cleanup failed: ${(error as Error).message}\n`))
			.finally(() => process.exit(code));
	};
	const handler = (signal: NodeJS.Signals) =>
		shutdown(signal === 'SIGINT' ? 130 : signal === 'SIGHUP' ? 129 : 143);
	process.on('SIGINT', handler);
	process.on('SIGTERM', handler);
	process.on('SIGHUP', handler);
	let timer: NodeJS.Timeout | undefined;
	if (options.orphanCheck) {
		const parent = process.ppid;
		timer = setInterval(() => {
			if (process.ppid !== parent) {
				process.stderr.write('parent process gone: stopping\n');
				shutdown(143);
			}
		}, 1_000);
		timer.unref();
	}
	return () => {
		process.off('SIGINT', handler);
		process.off('SIGTERM', handler);
		process.off('SIGHUP', handler);
		if (timer) clearInterval(timer);
	};
}
