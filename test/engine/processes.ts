/**
 * Several separate Node processes on one API key, each running the action node in n8n's engine
 * (process-worker.ts): what queue-mode workers, several n8n instances or a user's own scripts are to the
 * service. The processes share nothing but the sandbox's answers. Used by the pacing tests and the bench.
 */
import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import type { Sandbox } from '../sandbox/server';
import type { WorkerCrash, WorkerResult, WorkerRun } from './process-worker';

export interface ProcessPool {
	size: number;
	/** Runs one job per process (`delaysMs[i]` after the others are told to start), all at once. */
	run(jobs: Array<Omit<WorkerRun, 'baseUrl'>>, delaysMs?: number[]): Promise<WorkerResult[]>;
	stop(): Promise<void>;
}

const WORKER = path.join(__dirname, 'process-worker.ts');

/**
 * A Node process running `file` (TypeScript) with n8n's engine loadable, as the tests load it, with an
 * n8n user folder of its own (n8n-core writes a config file there at start) and an IPC channel.
 */
export function forkEngineProcess(file: string, nodeOptions: string[] = []): ChildProcess {
	return fork(file, [], {
		execArgv: [
			...nodeOptions,
			'-r',
			'ts-node/register/transpile-only',
			'-r',
			path.join(__dirname, '..', 'setup-env.js'),
		],
		// .ts before the codex .json beside each node file (Node tries .json first).
		env: {
			...process.env,
			N8N_USER_FOLDER: fs.mkdtempSync(path.join(os.tmpdir(), 'outreach-n8n-worker-')),
			TS_NODE_PROJECT: path.join(__dirname, '..', '..', 'tsconfig.test.json'),
			TS_NODE_PREFER_TS_EXTS: 'true',
		},
		stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
	});
}

/**
 * Starts `size` worker processes and waits until each has loaded n8n's engine and the nodes. A worker
 * that dies (while loading or during a run) fails what waits on it at once, with its own error.
 */
export async function startProcesses(size: number, baseUrl: string): Promise<ProcessPool> {
	const children: ChildProcess[] = [];
	const ready: Array<Promise<void>> = [];
	/** Each worker's end, once it has ended: its own error when it sent one. */
	const ends: Array<Promise<Error>> = [];
	for (let i = 0; i < size; i++) {
		const child = forkEngineProcess(WORKER);
		children.push(child);
		const end = new Promise<Error>((resolve) => {
			let crashed: string | undefined;
			child.on('message', (message: Partial<WorkerCrash>) => {
				if (message.crashed !== undefined) {
					crashed = message.crashed;
					resolve(new Error(`worker ${i} crashed: ${crashed}`));
				}
			});
			child.once('error', (error) => resolve(new Error(`worker ${i}: ${error.message}`)));
			// 'close' comes after the worker's last messages, so a crash report is not overtaken.
			child.once('close', (code, signal) =>
				resolve(new Error(`worker ${i} exited with ${signal ?? code} (its output is above)`)),
			);
		});
		ends.push(end);
		ready.push(
			new Promise((resolve, reject) => {
				void end.then(reject);
				child.on('message', (message: { ready?: boolean }) => {
					if (message.ready) resolve();
				});
			}),
		);
	}
	try {
		await Promise.all(ready);
	} catch (error) {
		for (const child of children) child.kill('SIGTERM');
		throw error;
	}

	const runOne = (i: number, job: WorkerRun) =>
		new Promise<WorkerResult>((resolve, reject) => {
			const child = children[i];
			const onMessage = (message: { result?: WorkerResult }) => {
				if (!message.result) return;
				child.off('message', onMessage);
				resolve(message.result);
			};
			child.on('message', onMessage);
			void ends[i].then(reject);
			if (child.connected) child.send({ run: job });
		});

	return {
		size,
		async run(jobs, delaysMs = []) {
			return Promise.all(
				jobs.map(async (job, i) => {
					const delay = delaysMs[i] ?? 0;
					if (delay > 0) await new Promise((r) => setTimeout(r, delay));
					return runOne(i, { baseUrl, ...job });
				}),
			);
		},
		async stop() {
			await Promise.all(
				children.map(
					(child) =>
						new Promise<void>((resolve) => {
							if (child.exitCode !== null || child.signalCode !== null) return resolve();
							child.once('exit', () => resolve());
							child.kill('SIGTERM');
						}),
				),
			);
		},
	};
}

export interface SharedRunFigures {
	requests: number;
	rateLimited: number;
	created: number;
	duplicates: number;
	failed: number;
	/** From the first request the sandbox saw to the last answer, ms. */
	wallMs: number;
	/** The least that many creates can take from the first request: every full window waited out. */
	floorMs: number;
	/** The sandbox's view, for a failure to show where the time went: `ms:.N` answered, `x` 429, per 250 ms. */
	timeline: string;
}

/**
 * Runs `perProcess` creates in each of the pool's processes against `sandbox`, all at once or staggered,
 * on `apiKey` (a key of its own per run: each process remembers what it learnt of a key), and returns the
 * figures the tests assert and the bench prints.
 */
export async function runShared(
	pool: ProcessPool,
	sandbox: Sandbox,
	options: { perProcess: number; staggerMs?: number; tag: string; apiKey: string },
): Promise<SharedRunFigures> {
	const { rateLimit, windowMs } = sandbox.config();
	const jobs = Array.from({ length: pool.size }, (_, p) => ({
		apiKey: options.apiKey,
		names: Array.from({ length: options.perProcess }, (_, i) => `${options.tag}-p${p}-${i}`),
	}));
	const delays = jobs.map((_, p) => p * (options.staggerMs ?? 0));
	const results = await pool.run(jobs, delays);
	const log = sandbox.requests();
	const stats = sandbox.stats();
	const total = pool.size * options.perProcess;
	const first = Math.min(...log.map((entry) => entry.time));
	const last = Math.max(...results.map((r) => r.endedAt));
	return {
		requests: stats.requests,
		rateLimited: stats.rateLimited,
		created: stats.creates.lead,
		duplicates: stats.duplicateCreates,
		failed: results.reduce((n, r) => n + r.failed.length, 0),
		wallMs: last - first,
		floorMs: (Math.ceil(total / rateLimit) - 1) * windowMs,
		timeline: timeline(log, first),
	};
}

function timeline(log: Array<{ time: number; status: number | null }>, first: number): string {
	const buckets = new Map<number, string>();
	for (const entry of log) {
		const at = Math.floor((entry.time - first) / 250) * 250;
		buckets.set(at, (buckets.get(at) ?? '') + (entry.status === 429 ? 'x' : '.'));
	}
	return [...buckets]
		.map(([at, marks]) => `${at}:${marks.replace(/\.+/g, (run) => `.${run.length}`)}`)
		.join(' ');
}
