/**
 * Installing, updating and removing the package the ways users do, from a registry the release script has
 * just published to (a local verdaccio: nothing is published anywhere else):
 * - the README's manual route, exactly as printed, into a fresh ~/.n8n/nodes;
 * - n8n's own installer at npm's default address (through the test's proxy: see default-registry.ts), by
 *   N8N_COMMUNITY_PACKAGES at start and by the Community Nodes API the editor calls: install, update,
 *   uninstall, a version that does not exist and a registry that is down.
 */
import fs from 'node:fs';
import path from 'node:path';

import { N8N_MAJOR, N8N_VERSION, N8nServer, PACKAGE_NAME, PROJECT_ROOT } from '../n8n/runtime';
import {
	ALL_TYPES,
	communityPackages,
	freshN8n,
	FULL_RELEASE,
	importLeadsWorkflow,
	installedVersion,
	ourNodeTypes,
	OWNER,
	runLeads,
	runReadmeRoute,
	startAndRunLeads,
	startInstallWorld,
	stopInstallWorld,
	WORKFLOW_ID,
	rehearseRelease,
	type InstallWorld,
} from './world';

const manifest = JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8'));
const VERSION: string = manifest.version;
/** The patch release the update tests publish (a bumped copy of the released tarball). */
const PATCH = VERSION.replace(/\d+$/, (n) => String(Number(n) + 1));

let world: InstallWorld | undefined;
let tarball = '';
const running: N8nServer[] = [];
const figures: Record<string, number | string> = {};

beforeAll(async () => {
	world = await startInstallWorld();
});

afterEach(async () => {
	for (const n8n of running.splice(0)) await n8n.stop();
});

afterAll(async () => {
	const failed = (globalThis as { __outreachE2eFailures?: number }).__outreachE2eFailures ?? 0;
	if (world) {
		process.stderr.write(
			`[install] proxy: ${world.proxy.record.served.length} registry requests answered locally, ` +
				`${world.proxy.record.refused.length} refused (${[...new Set(world.proxy.record.refused)].join(', ') || 'none'})\n` +
				`[install] figures: ${JSON.stringify(figures)}\n`,
		);
	}
	await stopInstallWorld(world, failed > 0);
});

const w = () => world!;

let patchPublished = false;
async function publishPatch(): Promise<void> {
	if (patchPublished) return;
	await w().registry.publishCopy(tarball, PATCH);
	patchPublished = true;
}

async function timed<T>(name: string, step: () => Promise<T>): Promise<T> {
	const started = Date.now();
	try {
		return await step();
	} finally {
		figures[name] = `${((Date.now() - started) / 1000).toFixed(1)} s`;
	}
}

/** Every file of dist/ with its modification time: what a build in this checkout would change. */
function distSnapshot(): Record<string, number> {
	const dist = path.join(PROJECT_ROOT, 'dist');
	if (!fs.existsSync(dist)) return {};
	return Object.fromEntries(
		fs
			.readdirSync(dist, { recursive: true, encoding: 'utf8' })
			.map((file) => [file, fs.statSync(path.join(dist, file)).mtimeMs]),
	);
}

test('release rehearsal: the script publish.yml runs, its steps in order, publishes to the local registry from its own copy of the checkout', async () => {
	const dist = distSnapshot();
	const result = await timed('release', () => rehearseRelease(w()));
	tarball = result.tarball;
	expect(path.dirname(tarball)).toBe(path.join(w().dir, 'release'));
	// The steps of a real release, in its order; the unit tests only with OUTREACH_RELEASE_FULL=1 (world.ts).
	const steps = [...result.stderr.matchAll(/^\[release\] ([a-z ]+): (done|skipped)/gm)].map(
		([, name, how]) => `${name} ${how}`,
	);
	expect(steps).toEqual([
		'build and lint done',
		FULL_RELEASE ? 'unit tests done' : 'unit tests skipped',
		'pack done',
		'publish done',
	]);
	// Built in its own folder: this checkout's dist/ is as it was.
	expect(distSnapshot()).toEqual(dist);
	const packument = await w().registry.packument();
	expect(packument['dist-tags'].latest).toBe(VERSION);
	expect(Object.keys(packument.versions)).toEqual([VERSION]);
	expect(packument.versions[VERSION].dist.integrity).toMatch(/^sha512-/);
});

test("manual route: the README's commands, as printed, install it into ~/.n8n/nodes; n8n loads and runs it", async () => {
	const options = await freshN8n(w(), 'manual');
	const home = options.userFolder;
	await timed('manualNpmInstall', () => runReadmeRoute(home, w().registry.url));
	expect(installedVersion(home)).toBe(VERSION);
	// n8n provides n8n-workflow: a second copy next to the package would break its error classes.
	const installed = fs
		.readdirSync(path.join(home, '.n8n', 'nodes', 'node_modules'))
		.filter((name) => !name.startsWith('.'));
	expect(installed).toEqual([PACKAGE_NAME]);

	await importLeadsWorkflow(w(), options);
	const { n8n, status, leads } = await startAndRunLeads(w(), options);
	running.push(n8n);
	expect(await ourNodeTypes(n8n)).toEqual(ALL_TYPES);
	expect(status).toBe(200);
	expect(leads).toHaveLength(3);
});

describe("n8n's installer at the default registry address (through the test's proxy)", () => {
	// N8N_COMMUNITY_PACKAGES_MANAGED_BY_ENV arrived in n8n 2.21: skipped (and reported so) on n8n 1.x.
	const envTest = N8N_MAJOR < 2 ? test.skip : test;
	envTest(
		'N8N_COMMUNITY_PACKAGES: installed at start, updated by naming the patch, removed when no longer named',
		async () => {
			const env = (packages: unknown[]) => ({
				N8N_COMMUNITY_PACKAGES_MANAGED_BY_ENV: 'true',
				N8N_COMMUNITY_PACKAGES: JSON.stringify(packages),
			});
			const options = await freshN8n(w(), 'env', env([{ name: PACKAGE_NAME, version: VERSION }]));
			const folder = options.userFolder;
			await importLeadsWorkflow(w(), options);
			const served = w().proxy.record.served.length;
			const first = await timed('envInstallStart', () => startAndRunLeads(w(), options));
			running.push(first.n8n);
			expect(w().proxy.record.served.length).toBeGreaterThan(served);
			expect(installedVersion(folder)).toBe(VERSION);
			const [record] = await communityPackages(first.n8n);
			expect(record).toMatchObject({ packageName: PACKAGE_NAME, installedVersion: VERSION });
			expect(record.installedNodes.map((n) => n.type).sort()).toEqual(
				[ALL_TYPES[0], ALL_TYPES[2]].sort(),
			);
			expect(await ourNodeTypes(first.n8n)).toEqual(ALL_TYPES);
			expect([first.status, first.leads.length]).toEqual([200, 3]);
			await first.n8n.stop();
			running.splice(0);

			// A patch release; the variable names it; n8n upgrades at the next start.
			await publishPatch();
			options.env = { ...options.env, ...env([{ name: PACKAGE_NAME, version: PATCH }]) };
			const second = await timed('envUpdateStart', () => startAndRunLeads(w(), options));
			running.push(second.n8n);
			expect(installedVersion(folder)).toBe(PATCH);
			expect((await communityPackages(second.n8n))[0].installedVersion).toBe(PATCH);
			// The saved workflow and its credential still run.
			expect([second.status, second.leads.length]).toEqual([200, 3]);
			await second.n8n.stop();
			running.splice(0);

			// Named no more: removed at start; the workflow that used it keeps its data.
			options.env = { ...options.env, ...env([]) };
			const third = new N8nServer(w().runtime, options);
			running.push(third);
			await third.start();
			await third.ensureOwner(OWNER);
			expect(installedVersion(folder)).toBeUndefined();
			expect(await communityPackages(third)).toEqual([]);
			expect(await ourNodeTypes(third)).toEqual([]);
			const saved = await third.rest<{ nodes: Array<{ type: string; parameters: unknown }> }>(
				'GET',
				`/workflows/${WORKFLOW_ID}`,
			);
			expect(saved.nodes.find((n) => n.type.startsWith(PACKAGE_NAME))?.parameters).toMatchObject({
				resource: 'lead',
				operation: 'getAll',
				limit: 3,
			});
		},
	);

	test('the Community Nodes API (what the editor calls): install, update offered and done, uninstall; bad input leaves nothing behind', async () => {
		const options = await freshN8n(w(), 'api');
		const folder = options.userFolder;
		await importLeadsWorkflow(w(), options);
		const n8n = new N8nServer(w().runtime, options);
		running.push(n8n);
		await n8n.start();
		await n8n.ensureOwner(OWNER);

		// A version that does not exist: n8n's message, and nothing installed.
		const missing = await n8n
			.rest('POST', '/community-packages', { name: PACKAGE_NAME, version: '9.9.9' })
			.then(
				() => 'installed?!',
				(error: Error) => error.message,
			);
		expect(missing).toMatch(/HTTP \d+ .*Package version does not exist/);
		figures.missingVersionMessage = missing.replace(/^.*?HTTP /, 'HTTP ').slice(0, 200);
		expect(installedVersion(folder)).toBeUndefined();
		expect(await communityPackages(n8n)).toEqual([]);

		// The registry is down: n8n's message, and nothing installed.
		await w().registry.stop();
		const down = await n8n
			.rest('POST', '/community-packages', { name: PACKAGE_NAME, version: VERSION })
			.then(
				() => 'installed?!',
				(error: Error) => error.message,
			);
		await w().registry.resume();
		expect(down).toMatch(/HTTP 4\d\d|HTTP 5\d\d/);
		figures.registryDownMessage = down.replace(/^.*?HTTP /, 'HTTP ').slice(0, 200);
		expect(installedVersion(folder)).toBeUndefined();
		expect(await communityPackages(n8n)).toEqual([]);
		expect(await ourNodeTypes(n8n)).toEqual([]);

		// Install the older release: the nodes appear without a restart and the workflow runs.
		const installed = await timed('apiInstall', () =>
			n8n.rest<{ installedVersion: string; installedNodes: unknown[] }>(
				'POST',
				'/community-packages',
				{ name: PACKAGE_NAME, version: VERSION },
			),
		);
		expect(installed.installedVersion).toBe(VERSION);
		expect(installed.installedNodes).toHaveLength(2);
		expect(await ourNodeTypes(n8n)).toEqual(ALL_TYPES);
		const first = await runLeads(n8n);
		expect([first.status, first.leads.length]).toEqual([200, 3]);

		await publishPatch();
		// The list offers the patch release (npm outdated, through the proxy); Update installs it; the
		// workflow and credential still run.
		const servedBefore = w().proxy.record.served.length;
		const [listed] = await communityPackages(n8n);
		expect(w().proxy.record.served.length).toBeGreaterThan(servedBefore);
		expect(listed).toMatchObject({ installedVersion: VERSION, updateAvailable: PATCH });
		await timed('apiUpdate', () =>
			n8n.rest('PATCH', '/community-packages', { name: PACKAGE_NAME, version: PATCH }),
		);
		expect(installedVersion(folder)).toBe(PATCH);
		expect((await communityPackages(n8n))[0].installedVersion).toBe(PATCH);
		const after = await n8n.callWebhook<unknown[]>('install-leads');
		expect([after.status, (after.body as unknown[]).length]).toEqual([200, 3]);

		// Uninstall: the nodes leave the panel, the folder and n8n's record; the workflow keeps its data.
		await n8n.rest('DELETE', `/community-packages?name=${PACKAGE_NAME}`);
		expect(installedVersion(folder)).toBeUndefined();
		expect(await communityPackages(n8n)).toEqual([]);
		expect(await ourNodeTypes(n8n)).toEqual([]);
		const saved = await n8n.rest<{ nodes: Array<{ type: string; parameters: unknown }> }>(
			'GET',
			`/workflows/${WORKFLOW_ID}`,
		);
		expect(saved.nodes.map((n) => n.type)).toContain(`${PACKAGE_NAME}.outreachAutomation`);
		// What the test ran against.
		figures.n8n = N8N_VERSION;
	});
});
