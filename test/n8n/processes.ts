/**
 * The children the harness starts (n8n, its CLI commands, npm pack, tar, databases): each in its own process
 * group, watched by a small watchdog that kills the group if this process dies, and stopped with its group
 * on exit, on Ctrl+C and on failure.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import { PROJECT_ROOT } from './config';

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

export function track(child: ChildProcess): void {
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
