/**
 * What n8n's queue mode needs besides n8n: Redis (the job queue) and PostgreSQL (the database main and workers
 * share), each a throwaway instance on a free loopback port with its data in a temporary folder. Installs
 * Debian's packages when they are missing and this runs as root; otherwise says what to install.
 */
import { execFileSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { freePort, HOST, run, spawnTracked, stopProcess } from '../n8n/runtime';

const log = (line: string) => process.stderr.write(`[queue] ${line}\n`);

function which(name: string): string | undefined {
	const dirs = [...(process.env.PATH ?? '').split(path.delimiter), '/usr/sbin', '/usr/bin'];
	for (const dir of dirs) {
		const file = path.join(dir, name);
		try {
			fs.accessSync(file, fs.constants.X_OK);
			return file;
		} catch {
			// not here
		}
	}
	return undefined;
}

/** The newest PostgreSQL server binaries: Debian keeps them per major under /usr/lib/postgresql. */
function postgresBin(): string | undefined {
	const has = (dir: string) =>
		['initdb', 'postgres', 'pg_isready'].every((b) => fs.existsSync(path.join(dir, b)));
	const root = '/usr/lib/postgresql';
	const majors = fs.existsSync(root)
		? fs
				.readdirSync(root)
				.filter((v) => /^\d+$/.test(v))
				.sort((a, b) => Number(b) - Number(a))
		: [];
	for (const major of majors)
		if (has(path.join(root, major, 'bin'))) return path.join(root, major, 'bin');
	const initdb = which('initdb');
	return initdb && has(path.dirname(fs.realpathSync(initdb)))
		? path.dirname(fs.realpathSync(initdb))
		: undefined;
}

export interface Tools {
	redisServer: string;
	pgBin: string;
}

/** Finds redis-server and PostgreSQL; installs the missing Debian packages with apt-get when root. */
export async function ensureTools(): Promise<Tools> {
	let redisServer = which('redis-server');
	let pgBin = postgresBin();
	const missing = [...(redisServer ? [] : ['redis-server']), ...(pgBin ? [] : ['postgresql'])];
	if (missing.length) {
		const aptGet = which('apt-get');
		if (process.getuid?.() !== 0 || !aptGet) {
			throw new Error(
				`The queue-mode test needs Redis and PostgreSQL, and ${missing.join(' and ')} is not installed. ` +
					`On Debian or Ubuntu: sudo apt-get install -y ${missing.join(' ')}; elsewhere install ` +
					'redis-server and the PostgreSQL server (initdb, postgres, pg_isready) and put them on PATH.',
			);
		}
		log(`installing ${missing.join(' ')} with apt-get (missing on this machine; takes a minute)`);
		const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
		await run(aptGet, ['update', '-qq'], { env, timeoutMs: 300_000 });
		await run(aptGet, ['install', '-y', '-qq', ...missing], { env, timeoutMs: 600_000 });
		redisServer = which('redis-server');
		pgBin = postgresBin();
		if (!redisServer || !pgBin)
			throw new Error(
				`apt-get installed ${missing.join(' ')}, but redis-server or initdb is still missing`,
			);
	}
	return { redisServer: redisServer!, pgBin: pgBin! };
}

/** A user PostgreSQL accepts: initdb and postgres refuse to run as root. */
function postgresUser(): { uid?: number; gid?: number; name: string } {
	if (process.getuid?.() !== 0) return { name: 'the current user' };
	for (const name of ['postgres', 'nobody']) {
		try {
			const uid = Number(execFileSync('id', ['-u', name]).toString().trim());
			const gid = Number(execFileSync('id', ['-g', name]).toString().trim());
			return { uid, gid, name };
		} catch {
			// no such user
		}
	}
	throw new Error(
		'Running as root, and neither a "postgres" nor a "nobody" user exists to run PostgreSQL',
	);
}

async function exited(child: ChildProcess): Promise<number> {
	if (child.exitCode !== null) return child.exitCode;
	return new Promise((resolve) => child.once('exit', (code) => resolve(code ?? 1)));
}

export interface Service {
	port: number;
	stop(): Promise<void>;
}

/** redis-server on a free loopback port, nothing persisted. */
export async function startRedis(tools: Tools, dir: string): Promise<Service> {
	const port = await freePort();
	fs.mkdirSync(dir, { recursive: true });
	const logFile = path.join(dir, 'redis.log');
	const child = spawnTracked(
		tools.redisServer,
		['--port', String(port), '--bind', HOST, '--save', '', '--appendonly', 'no', '--dir', dir],
		{ logFile, cwd: dir },
	);
	const deadline = Date.now() + 20_000;
	while (!(await redisPing(port))) {
		if (child.exitCode !== null || Date.now() > deadline)
			throw new Error(
				`redis-server did not start:\n${fs.readFileSync(logFile, 'utf8').slice(-2000)}`,
			);
		await sleep(100);
	}
	return { port, stop: () => stopProcess(child) };
}

function redisPing(port: number): Promise<boolean> {
	return new Promise((resolve) => {
		const socket = net.connect(port, HOST);
		socket.setTimeout(1_000);
		socket.once('connect', () => socket.write('PING\r\n'));
		socket.once('data', (data) => {
			socket.destroy();
			resolve(data.toString().startsWith('+PONG'));
		});
		socket.once('error', () => resolve(false));
		socket.once('timeout', () => {
			socket.destroy();
			resolve(false);
		});
	});
}

/** A throwaway PostgreSQL cluster (superuser `n8n`, trust auth, loopback TCP only) in `dir`. */
export async function startPostgres(
	tools: Tools,
	dir: string,
): Promise<Service & { user: string }> {
	const port = await freePort();
	const owner = postgresUser();
	const data = path.join(dir, 'data');
	fs.mkdirSync(dir, { recursive: true });
	const logFile = path.join(dir, 'postgres.log');
	fs.writeFileSync(logFile, '');
	if (owner.uid !== undefined) {
		fs.chownSync(dir, owner.uid, owner.gid!);
		fs.chownSync(logFile, owner.uid, owner.gid!);
		// The parents must be passable for that user (mkdtemp makes them 0700).
		for (let p = path.dirname(dir); p !== path.dirname(p); p = path.dirname(p)) {
			const mode = fs.statSync(p).mode;
			if ((mode & 0o001) === 0) fs.chmodSync(p, mode | 0o111);
		}
	}
	const as = { uid: owner.uid, gid: owner.gid, cwd: dir, logFile };
	const initdb = spawnTracked(
		path.join(tools.pgBin, 'initdb'),
		['-D', data, '-U', 'n8n', '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync'],
		as,
	);
	if ((await exited(initdb)) !== 0)
		throw new Error(
			`initdb (as ${owner.name}) failed:\n${fs.readFileSync(logFile, 'utf8').slice(-2000)}`,
		);
	const child = spawnTracked(
		path.join(tools.pgBin, 'postgres'),
		[
			'-D',
			data,
			'-p',
			String(port),
			'-c',
			`listen_addresses=${HOST}`,
			'-c',
			'unix_socket_directories=',
			'-c',
			'fsync=off',
			'-c',
			'synchronous_commit=off',
			'-c',
			'full_page_writes=off',
		],
		as,
	);
	const deadline = Date.now() + 30_000;
	for (;;) {
		const ready = await run(
			path.join(tools.pgBin, 'pg_isready'),
			['-h', HOST, '-p', String(port), '-U', 'n8n', '-d', 'postgres'],
			{ check: false, timeoutMs: 5_000 },
		).catch(() => ({ code: 1 }));
		if (ready.code === 0) break;
		if (child.exitCode !== null || Date.now() > deadline)
			throw new Error(`postgres did not start:\n${fs.readFileSync(logFile, 'utf8').slice(-2000)}`);
		await sleep(200);
	}
	return { port, user: 'n8n', stop: () => stopProcess(child, 15_000) };
}
