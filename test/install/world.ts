/**
 * The world of the install tests: the provisioned n8n, a local registry the release script publishes to, the
 * sandbox API, and the proxy that presents the local registry at npm's default address to one n8n.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { withoutNpmSettings } from '../n8n/provision';
import {
	CREDENTIAL_TYPE,
	freePort,
	importCredentials,
	importWorkflows,
	N8nServer,
	NODE_TYPES,
	PACKAGE_NAME,
	PROJECT_ROOT,
	provision,
	run,
	type N8nOptions,
	type Owner,
	type Runtime,
} from '../n8n/runtime';
import { outreachNode, webhookNode, workflow, type WorkflowJson } from '../n8n/workflow-json';
import { startSandbox, type Sandbox } from '../sandbox/server';
import { DefaultRegistryProxy, makeCertificates } from './default-registry';
import { LocalRegistry } from './registry';

export const OWNER: Owner = {
	email: 'install-owner@example.com',
	password: `Inst-${randomBytes(9).toString('base64url')}1`,
	firstName: 'Install',
	lastName: 'Owner',
};

export const CREDENTIAL = { id: 'InstallSandbox01', name: 'Outreach Automation (install test)' };
export const WORKFLOW_ID = 'installLeadsHook1';
export const WEBHOOK_PATH = 'install-leads';

/** Webhook -> Outreach Automation (Lead: Get Many, limit 3): proves the installed node runs. */
export function leadsWorkflow(): WorkflowJson {
	return workflow(WORKFLOW_ID, 'install: three leads', [
		webhookNode(WEBHOOK_PATH),
		outreachNode(
			CREDENTIAL,
			{ resource: 'lead', operation: 'getAll', returnAll: false, limit: 3, filters: {} },
			[220, 0],
		),
	]);
}

export interface InstallWorld {
	runtime: Runtime;
	registry: LocalRegistry;
	sandbox: Sandbox;
	proxy: DefaultRegistryProxy;
	/** Scratch space: user folders, certificates, the released tarball. */
	dir: string;
	folders: string[];
}

export async function startInstallWorld(): Promise<InstallWorld> {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'outreach-install-'));
	(globalThis as { __outreachE2eUserFolder?: string }).__outreachE2eUserFolder = dir;
	const runtime = await provision();
	const registry = await LocalRegistry.start(runtime);
	const sandbox = await startSandbox({
		seed: { leads: 20, campaigns: 2, messages: 10, seed: 23 },
		apiKeys: [`inst-${randomBytes(12).toString('hex')}`],
	});
	const proxy = new DefaultRegistryProxy(
		registry.url,
		await makeCertificates(path.join(dir, 'certs')),
	);
	await proxy.start();
	return { runtime, registry, sandbox, proxy, dir, folders: [] };
}

export async function stopInstallWorld(world: InstallWorld | undefined, failed: boolean) {
	if (!world) return;
	await world.proxy.stop();
	await world.sandbox.stop();
	await world.registry.stop();
	if (failed) {
		process.stderr.write(
			`\n[install] a test failed; kept ${world.dir} and the registry in ${world.registry.dir}\n`,
		);
		return;
	}
	await world.registry.remove();
	fs.rmSync(world.dir, { recursive: true, force: true });
}

/**
 * A fresh n8n user folder that is also HOME (so ~/.n8n/nodes, ~/.npm and ~/.npmrc are its own), and the
 * options of an n8n that reaches "registry.npmjs.org" only through the test's proxy.
 */
export async function freshN8n(
	world: InstallWorld,
	name: string,
	env: Record<string, string> = {},
): Promise<N8nOptions> {
	const userFolder = fs.mkdtempSync(path.join(world.dir, `${name}-`));
	world.folders.push(userFolder);
	// n8n 1.x runs `npm outdated` (the editor's "Update available") with an environment stripped to PATH, so
	// the proxy settings must also live in the nodes folder's own .npmrc, which npm reads from its cwd;
	// without it that one command asked the real registry directly.
	const nodesDir = path.join(userFolder, '.n8n', 'nodes');
	fs.mkdirSync(nodesDir, { recursive: true });
	fs.writeFileSync(path.join(nodesDir, '.npmrc'), world.proxy.npmrc());
	return {
		userFolder,
		port: await freePort(),
		brokerPort: await freePort(),
		env: {
			HOME: userFolder,
			npm_config_userconfig: path.join(userFolder, '.npmrc'),
			npm_config_cache: path.join(userFolder, '.npm'),
			npm_config_update_notifier: 'false',
			...world.proxy.env(),
			...env,
		},
	};
}

/** Imports the sandbox credential and the leads workflow (before n8n starts). */
export async function importLeadsWorkflow(world: InstallWorld, options: N8nOptions) {
	await importCredentials(world.runtime, options, [
		{
			...CREDENTIAL,
			type: CREDENTIAL_TYPE,
			data: { baseUrl: world.sandbox.url, apiKey: world.sandbox.apiKey },
		},
	]);
	await importWorkflows(world.runtime, options, [leadsWorkflow()]);
}

/** Starts n8n, signs in, publishes the leads workflow and calls it: the leads it answered with. */
export async function startAndRunLeads(
	world: InstallWorld,
	options: N8nOptions,
): Promise<{ n8n: N8nServer; status: number; leads: unknown[] }> {
	const n8n = new N8nServer(world.runtime, options);
	await n8n.start();
	await n8n.ensureOwner(OWNER);
	const { status, leads } = await runLeads(n8n);
	return { n8n, status, leads };
}

export async function runLeads(n8n: N8nServer): Promise<{ status: number; leads: unknown[] }> {
	const apiKey = await n8n.createApiKey();
	await n8n.publish(apiKey, [WORKFLOW_ID]);
	const answer = await n8n.callWebhook<unknown[]>(WEBHOOK_PATH);
	return { status: answer.status, leads: Array.isArray(answer.body) ? answer.body : [] };
}

/** The node types n8n offers in its panel (the editor's /types/nodes.json), ours only. */
export async function ourNodeTypes(n8n: N8nServer): Promise<string[]> {
	// n8n 1.x rewrites the file after an install: a read in the middle of it is cut short (or is not yet
	// the list), so read again.
	let types: Array<{ name: string }> = [];
	for (let attempt = 1; ; attempt++) {
		try {
			const read = await n8n.session<unknown>('GET', '/types/nodes.json');
			if (Array.isArray(read)) {
				types = read as Array<{ name: string }>;
				break;
			}
			if (attempt >= 10)
				throw new Error(`/types/nodes.json is not a list: ${String(read).slice(0, 200)}`);
		} catch (error) {
			if (attempt >= 10 || !(error instanceof SyntaxError)) throw error;
		}
		await new Promise((resolve) => setTimeout(resolve, 500));
	}
	return [
		...new Set(types.map((t) => t.name).filter((n) => n.startsWith(`${PACKAGE_NAME}.`))),
	].sort();
}

export const ALL_TYPES = [NODE_TYPES.action, NODE_TYPES.tool, NODE_TYPES.trigger].sort();

export interface InstalledPackage {
	packageName: string;
	installedVersion: string;
	updateAvailable?: string;
	installedNodes: Array<{ name: string; type: string }>;
	failedLoading?: boolean;
}

/** Settings -> Community Nodes, as data: the packages n8n has on record. */
export async function communityPackages(n8n: N8nServer): Promise<InstalledPackage[]> {
	return n8n.rest<InstalledPackage[]>('GET', '/community-packages');
}

/** The version in the installed copy's package.json, or undefined when the folder is gone. */
export function installedVersion(userFolder: string): string | undefined {
	const file = path.join(userFolder, '.n8n', 'nodes', 'node_modules', PACKAGE_NAME, 'package.json');
	return fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')).version : undefined;
}

/**
 * The release rehearsal runs every step of the release script except the unit tests, unless
 * OUTREACH_RELEASE_FULL=1: `.ci/run` runs the unit suite (in `npm test`) just before this suite, and it
 * takes minutes on a busy machine. Build and lint, pack, the tarball's checks and publish always run.
 */
export const FULL_RELEASE = process.env.OUTREACH_RELEASE_FULL === '1';

/**
 * A copy of the checkout as it is on disk (tracked and untracked files git does not ignore; no dist/), with
 * the checkout's node_modules linked in: the release builds there, so the checkout's own dist/ (a playground
 * or another suite may be using it) is never emptied.
 */
async function stageCheckout(dest: string): Promise<void> {
	fs.mkdirSync(dest, { recursive: true });
	let files: string[];
	try {
		const listed = await run(
			'git',
			['ls-files', '-z', '--cached', '--others', '--exclude-standard'],
			{ cwd: PROJECT_ROOT },
		);
		files = listed.stdout.split('\0').filter(Boolean);
	} catch {
		// Not a git checkout (e.g. an unpacked source archive): everything but what is built or installed.
		files = fs
			.readdirSync(PROJECT_ROOT, { recursive: true, encoding: 'utf8' })
			.filter((file) => !/^(node_modules|dist|\.git)(\/|$)/.test(file));
	}
	for (const file of files) {
		const from = path.join(PROJECT_ROOT, file);
		if (!fs.existsSync(from) || !fs.statSync(from).isFile()) continue; // deleted, or a folder
		fs.mkdirSync(path.dirname(path.join(dest, file)), { recursive: true });
		fs.copyFileSync(from, path.join(dest, file));
	}
	fs.symlinkSync(path.join(PROJECT_ROOT, 'node_modules'), path.join(dest, 'node_modules'), 'dir');
}

export interface Rehearsal {
	/** The published tarball. */
	tarball: string;
	/** The release script's step log. */
	stderr: string;
}

/**
 * The release script publish.yml runs (scripts/release.mjs), to the local registry, from a copy of the
 * checkout (stageCheckout): its steps in their order, the unit tests left out unless FULL_RELEASE.
 */
export async function rehearseRelease(
	world: InstallWorld,
	timeoutMs = 900_000,
): Promise<Rehearsal> {
	const checkout = path.join(world.dir, 'checkout');
	await stageCheckout(checkout);
	const result = await run(
		'node',
		[
			path.join(checkout, 'scripts', 'release.mjs'),
			'--registry',
			world.registry.url,
			'--pack-dir',
			path.join(world.dir, 'release'),
			...(FULL_RELEASE ? [] : ['--skip-unit-tests']),
		],
		{
			cwd: checkout,
			env: { ...process.env, npm_config_userconfig: world.registry.userconfig },
			timeoutMs,
		},
	);
	return { tarball: result.stdout.trim().split('\n').pop()!, stderr: result.stderr };
}

/** The manual route of docs/installing.md (the README links there): the shell block under "Manually", as printed. */
export function readmeManualRoute(): string {
	const guide = fs.readFileSync(path.join(PROJECT_ROOT, 'docs', 'installing.md'), 'utf8');
	const match = /\*\*Manually[^\n]*\n+```sh\n([\s\S]*?)```/.exec(guide);
	if (!match) throw new Error('docs/installing.md has no "Manually" shell block');
	return match[1];
}

/** Runs the README's block as a user with a fresh HOME whose npm points at `registry`. */
export async function runReadmeRoute(home: string, registry: string) {
	return run('bash', ['-euo', 'pipefail', '-c', readmeManualRoute()], {
		cwd: home,
		env: {
			...withoutNpmSettings(process.env),
			HOME: home,
			npm_config_registry: registry,
			npm_config_userconfig: path.join(home, '.npmrc'),
			npm_config_cache: path.join(home, '.npm'),
			npm_config_update_notifier: 'false',
		},
		timeoutMs: 180_000,
	});
}
