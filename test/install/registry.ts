/**
 * A local npm registry for the install tests: verdaccio, installed once into the n8n cache folder (a verified,
 * stamped part, like Node and n8n: see test/n8n/provision.ts), run on the provisioned Node 24 on a free
 * loopback port with temporary storage and NO uplinks: it serves only what the tests publish, and asks no
 * other registry for anything.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { ensurePart, withoutNpmSettings } from '../n8n/provision';
import {
	freePort,
	HOST,
	PACKAGE_NAME,
	run,
	spawnTracked,
	stopProcess,
	type Runtime,
} from '../n8n/runtime';

export const VERDACCIO_VERSION = '6.10.4';
/** verdaccio's dependency names node-fetch by a tag (`cjs`) the registry these machines reach lacks. */
const VERDACCIO_OVERRIDES = { 'node-fetch': '2.7.0' };

const log = (line: string) => process.stderr.write(`[registry] ${line}\n`);

/** Installs (or re-verifies) verdaccio in `<cache>/verdaccio-<version>`; returns its CLI entry. */
export async function provisionVerdaccio(runtime: Runtime): Promise<string> {
	const dir = path.join(runtime.cacheDir, `verdaccio-${VERDACCIO_VERSION}`);
	const entry = (root: string) => path.join(root, 'node_modules', 'verdaccio', 'bin', 'verdaccio');
	const env = {
		...withoutNpmSettings(process.env),
		PATH: `${path.join(runtime.nodeHome, 'bin')}${path.delimiter}${process.env.PATH ?? ''}`,
	};
	await ensurePart(
		dir,
		{ verdaccio: VERDACCIO_VERSION, overrides: VERDACCIO_OVERRIDES },
		log,
		`verdaccio ${VERDACCIO_VERSION}`,
		{
			install: async (partial) => {
				log(`installing verdaccio ${VERDACCIO_VERSION} (a local npm registry, ~65 MB, ~15 s)`);
				fs.writeFileSync(
					path.join(partial, 'package.json'),
					`${JSON.stringify(
						{
							private: true,
							description: "The local registry of n8n-nodes-outreach-automation's install tests.",
							dependencies: { verdaccio: VERDACCIO_VERSION },
							overrides: VERDACCIO_OVERRIDES,
						},
						null,
						2,
					)}\n`,
				);
				await run(
					'npm',
					['install', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'],
					{ cwd: partial, env, timeoutMs: 10 * 60_000 },
				);
			},
			verify: async (root) => {
				const { stdout } = await run(runtime.nodeBin, [entry(root), '--version'], {
					cwd: root,
					env,
					timeoutMs: 60_000,
				});
				if (!stdout.includes(VERDACCIO_VERSION))
					throw new Error(`verdaccio --version printed "${stdout.trim()}"`);
			},
		},
	);
	return entry(dir);
}

export class LocalRegistry {
	private child?: ReturnType<typeof spawnTracked>;
	/** An npm user config file holding the publish token for this registry. */
	readonly userconfig: string;

	private constructor(
		readonly runtime: Runtime,
		readonly entry: string,
		readonly dir: string,
		readonly port: number,
	) {
		this.userconfig = path.join(dir, 'publish.npmrc');
	}

	get url(): string {
		return `http://${HOST}:${this.port}`;
	}

	get logFile(): string {
		return path.join(this.dir, 'verdaccio.log');
	}

	static async start(runtime: Runtime): Promise<LocalRegistry> {
		const entry = await provisionVerdaccio(runtime);
		const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'outreach-registry-'));
		const registry = new LocalRegistry(runtime, entry, dir, await freePort());
		fs.writeFileSync(
			path.join(dir, 'config.yaml'),
			[
				`storage: ${path.join(dir, 'storage')}`,
				'auth:',
				`  htpasswd: { file: ${path.join(dir, 'htpasswd')}, max_users: 10 }`,
				'# No uplinks: it serves only what the tests publish and never asks another registry.',
				'uplinks: {}',
				'packages:',
				"  '**': { access: $all, publish: $authenticated, unpublish: $authenticated }",
				'log: { type: stdout, format: json, level: warn }',
				'',
			].join('\n'),
		);
		await registry.resume();
		const user = `release-${randomBytes(4).toString('hex')}`;
		const response = await fetch(`${registry.url}/-/user/org.couchdb.user:${user}`, {
			method: 'PUT',
			headers: { 'content-type': 'application/json' },
			body: JSON.stringify({ name: user, password: randomBytes(12).toString('hex') }),
		});
		const { token } = (await response.json()) as { token?: string };
		if (!token) throw new Error(`verdaccio gave no token (HTTP ${response.status})`);
		fs.writeFileSync(registry.userconfig, `//${HOST}:${registry.port}/:_authToken=${token}\n`, {
			mode: 0o600,
		});
		return registry;
	}

	/** Starts (or restarts, same port and storage) verdaccio and waits until it answers. */
	async resume(): Promise<void> {
		this.child = spawnTracked(
			this.runtime.nodeBin,
			[
				this.entry,
				'--config',
				path.join(this.dir, 'config.yaml'),
				'--listen',
				`${HOST}:${this.port}`,
			],
			{ cwd: this.dir, env: withoutNpmSettings(process.env), logFile: this.logFile },
		);
		for (let i = 0; i < 240; i++) {
			if (this.child.exitCode !== null)
				throw new Error(`verdaccio exited: ${fs.readFileSync(this.logFile, 'utf8').slice(-2000)}`);
			try {
				if ((await fetch(`${this.url}/-/ping`)).ok) return;
			} catch {
				// not listening yet
			}
			await sleep(250);
		}
		throw new Error('verdaccio did not answer within 60 s');
	}

	/** Stops verdaccio (the "registry is down" case, or the end). */
	async stop(): Promise<void> {
		const child = this.child;
		this.child = undefined;
		if (child) await stopProcess(child, 5_000);
	}

	async remove(): Promise<void> {
		await this.stop();
		fs.rmSync(this.dir, { recursive: true, force: true });
	}

	/** The registry's document for the package (versions, dist-tags, integrity), as npm sees it. */
	async packument(): Promise<{
		'dist-tags': Record<string, string>;
		versions: Record<string, { dist: { integrity: string; tarball: string } }>;
	}> {
		const response = await fetch(`${this.url}/${PACKAGE_NAME}`);
		if (!response.ok) throw new Error(`GET /${PACKAGE_NAME}: HTTP ${response.status}`);
		return (await response.json()) as never;
	}

	/**
	 * Publishes a copy of `tarball` with another version (a patch release, made in a temporary folder: the
	 * project's package.json is never touched).
	 */
	async publishCopy(tarball: string, version: string): Promise<void> {
		const work = fs.mkdtempSync(path.join(os.tmpdir(), 'outreach-bump-'));
		try {
			await run('tar', ['-xzf', tarball, '-C', work]);
			const manifestFile = path.join(work, 'package', 'package.json');
			const manifest = JSON.parse(fs.readFileSync(manifestFile, 'utf8'));
			manifest.version = version;
			fs.writeFileSync(manifestFile, `${JSON.stringify(manifest, null, 2)}\n`);
			await run(
				'npm',
				[
					'publish',
					'--registry',
					this.url,
					'--userconfig',
					this.userconfig,
					'--ignore-scripts',
					'--loglevel=error',
				],
				{
					cwd: path.join(work, 'package'),
					env: withoutNpmSettings(process.env),
					timeoutMs: 120_000,
				},
			);
		} finally {
			fs.rmSync(work, { recursive: true, force: true });
		}
	}
}
