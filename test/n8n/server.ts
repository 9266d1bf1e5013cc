/**
 * A running n8n: `n8n start` as a child bound to 127.0.0.1 (N8nServer: readiness, the owner, API keys, REST
 * and public API calls, publishing, webhooks, its log, stop), and the ports it needs.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { n8nEnv, type N8nOptions } from './cli';
import { HOST, N8N_MAJOR, type Runtime } from './config';
import { stopProcess, tail, track } from './processes';

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
 * After a suite: when a test failed, says where n8n's log is, prints its last lines and keeps the user
 * folder to look into; otherwise removes the folder. `tag` names the suite in the output.
 */
export function reportOrClean(
	tag: string,
	n8n: N8nServer,
	userFolder: string,
	failed: boolean,
	lines = 60,
): void {
	if (!failed) {
		fs.rmSync(userFolder, { recursive: true, force: true });
		return;
	}
	process.stderr.write(
		`\n[${tag}] a test failed. n8n's log: ${n8n.logFile} (user folder kept: ${userFolder})\n` +
			`[${tag}] last lines of n8n's log:\n${n8n.logTail(lines)}\n`,
	);
}
