/**
 * What the release publishes and how: the packed file list, the pinned versions, and the GitHub workflows
 * (they cannot run on this machine, so their decisive properties are read from the files).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import { parse } from 'yaml';

import versions from '../n8n/versions.json';
import { committedSchemaFiles } from '../tools/schemas';

const ROOT = path.resolve(__dirname, '..', '..');
const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
const readWorkflow = (name: string) =>
	parse(fs.readFileSync(path.join(ROOT, '.github', 'workflows', name), 'utf8'));

interface Step {
	uses?: string;
	run?: string;
	with?: Record<string, unknown>;
	env?: Record<string, string>;
}

const stepsOf = (workflow: { jobs: Record<string, { steps: Step[] }> }) =>
	Object.values(workflow.jobs).flatMap((job) => job.steps);
const runs = (steps: Step[]) => steps.map((step) => step.run ?? '').filter(Boolean);

/** Builds dist/ when it is missing or older than a source file, so the pack list is the real one. */
function ensureBuilt(): void {
	const newestSource = (dir: string): number =>
		fs.readdirSync(dir, { withFileTypes: true }).reduce((max, entry) => {
			const full = path.join(dir, entry.name);
			return Math.max(max, entry.isDirectory() ? newestSource(full) : fs.statSync(full).mtimeMs);
		}, 0);
	const built = path.join(ROOT, manifest.n8n.nodes[0]);
	const stale =
		!fs.existsSync(built) ||
		Math.max(newestSource(path.join(ROOT, 'nodes')), newestSource(path.join(ROOT, 'credentials'))) >
			fs.statSync(built).mtimeMs;
	if (stale) execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'pipe' });
}

describe('the published package', () => {
	let files: string[];

	beforeAll(() => {
		ensureBuilt();
		const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
			cwd: ROOT,
			encoding: 'utf8',
			env: { ...process.env, npm_config_loglevel: 'error' },
		});
		files = (
			JSON.parse(out.slice(out.indexOf('['))) as Array<{ files: Array<{ path: string }> }>
		)[0].files.map((f) => f.path);
	}, 120_000);

	test('holds dist/, package.json, README, LICENSE and CHANGELOG, nothing else', () => {
		const outside = files.filter((file) => !file.startsWith('dist/'));
		expect(outside.sort()).toEqual(['CHANGELOG.md', 'LICENSE', 'README.md', 'package.json']);
		for (const entry of [...manifest.n8n.nodes, ...manifest.n8n.credentials])
			expect(files).toContain(entry);
		expect(files).toEqual(
			expect.arrayContaining(['dist/nodes/OutreachAutomation/outreachAutomation.svg']),
		);
	});

	test("carries every output schema n8n's editor previews, where n8n looks for them", () => {
		const schemas = [...committedSchemaFiles().keys()];
		expect(schemas.length).toBe(16);
		expect(files.filter((file) => file.includes('/__schema__/')).sort()).toEqual(
			schemas.map((file) => `dist/nodes/OutreachAutomation/__schema__/${file}`).sort(),
		);
	});

	test('has no tests, sandbox, tools, benchmarks or test source maps', () => {
		expect(
			files.filter((file) =>
				/(^|\/)(test|tests|sandbox|bench|tools|e2e)(\/|$)|\.test\.|tsbuildinfo/.test(file),
			),
		).toEqual([]);
		// Source maps of the nodes may ship (they point at dist's own .js); none of tests.
		expect(
			files.filter((file) => file.endsWith('.map') && !/^dist\/(nodes|credentials)\//.test(file)),
		).toEqual([]);
	});

	test('keeps the community-node rules: no runtime dependencies, overrides or lifecycle scripts', () => {
		expect(manifest.dependencies ?? {}).toEqual({});
		expect(manifest.peerDependencies).toEqual({ 'n8n-workflow': '*' });
		expect(manifest.overrides).toBeUndefined();
		for (const script of [
			'prepare',
			'preinstall',
			'install',
			'postinstall',
			'prepublish',
			'prepublishOnly',
		]) {
			expect(manifest.scripts[script]).toBeUndefined();
		}
	});
});

describe('pinned versions', () => {
	test("the engine tests' n8n-core and n8n-workflow match the default real n8n", () => {
		const pin = (versions.n8n as Record<string, { engine?: Record<string, string> }>)[
			versions.defaultN8n
		];
		expect(pin.engine).toEqual({
			'n8n-core': manifest.devDependencies['n8n-core'],
			'n8n-workflow': manifest.devDependencies['n8n-workflow'],
		});
	});

	test('no other file of the repository writes the runtime versions', () => {
		const pinned = [versions.node, ...Object.keys(versions.n8n)];
		const offenders: string[] = [];
		const walk = (dir: string) => {
			for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
				if (['node_modules', 'dist', '.git'].includes(entry.name)) continue;
				const full = path.join(dir, entry.name);
				if (entry.isDirectory()) walk(full);
				else if (/\.(ts|js|mjs|sh)$/.test(entry.name) || entry.name === 'run') {
					const text = fs.readFileSync(full, 'utf8');
					if (
						pinned.some(
							(v) => text.includes(`'${v}'`) || text.includes(`"${v}"`) || text.includes(`=${v}`),
						)
					) {
						offenders.push(path.relative(ROOT, full));
					}
				}
			}
		};
		walk(path.join(ROOT, 'test'));
		walk(path.join(ROOT, '.ci'));
		expect(offenders.filter((file) => file !== 'test/package/package.test.ts')).toEqual([]);
	});
});

describe('GitHub workflows (a release n8n can verify)', () => {
	test('publish: on a version tag, the release script with provenance and an OIDC token', () => {
		const workflow = readWorkflow('publish.yml');
		expect(Object.keys(workflow.on)).toEqual(['push']);
		expect(workflow.on.push.tags).toEqual([expect.stringMatching(/^v/)]);
		expect(workflow.permissions).toMatchObject({ 'id-token': 'write', contents: 'read' });
		const steps = stepsOf(workflow);
		const commands = runs(steps);
		// One release path: the script `npm run test:install` rehearses, never a second `npm publish`.
		expect(commands.filter((c) => /npm publish/.test(c))).toEqual([]);
		const release = commands.findIndex((c) => c.startsWith('node scripts/release.mjs'));
		expect(release).toBeGreaterThan(commands.findIndex((c) => c.startsWith('npm ci')));
		expect(commands.findIndex((c) => c.startsWith('npm ci'))).toBeGreaterThanOrEqual(0);
		expect(commands[release]).toMatch(/--registry https:\/\/registry\.npmjs\.org( |$)/);
		expect(commands[release]).toMatch(/--provenance/);
		expect(commands[release]).toMatch(/--tag "\$\{GITHUB_REF_NAME\}"/);
		const setup = steps.find((s) => s.uses?.startsWith('actions/setup-node'));
		expect(setup?.with?.['registry-url']).toBe('https://registry.npmjs.org');
		expect(steps.find((s) => (s.run ?? '').startsWith('node scripts/release.mjs'))?.env).toEqual({
			NODE_AUTH_TOKEN: expect.stringMatching(/secrets\./),
		});
	});

	test('the release script: lint, unit tests, pack, then publish to the registry it is given', () => {
		const script = fs.readFileSync(path.join(ROOT, 'scripts', 'release.mjs'), 'utf8');
		const at = (pattern: RegExp) => script.search(pattern);
		const publish = at(/'publish',\n\s*tarball/);
		expect(publish).toBeGreaterThan(0);
		for (const before of [/\['run', 'lint'/, /\['run', 'test:unit'/, /\['pack', '--json'/]) {
			expect(at(before)).toBeGreaterThan(0);
			expect(at(before)).toBeLessThan(publish);
		}
		expect(script).toMatch(/'--access',\n\s*'public'/);
		// The registry is never implied, and provenance only where GitHub can sign it.
		const run = (args: string[], github = false) => {
			try {
				execFileSync('node', [path.join(ROOT, 'scripts', 'release.mjs'), ...args], {
					env: { ...process.env, GITHUB_ACTIONS: github ? 'true' : '' },
					stdio: 'pipe',
				});
				return '';
			} catch (error) {
				return String((error as { stderr?: Buffer }).stderr);
			}
		};
		expect(run([])).toMatch(/--registry <url> is required/);
		expect(run(['--registry', 'http://127.0.0.1:9', '--provenance'])).toMatch(
			/--provenance needs GitHub Actions/,
		);
		expect(
			run(['--registry', 'http://127.0.0.1:9', '--skip-unit-tests', '--provenance'], true),
		).toMatch(/a release with --provenance runs every check/);
		expect(run(['--registry', 'http://127.0.0.1:9', '--tag', 'v0.0.0-not-this'])).toMatch(
			/does not match package.json's version/,
		);
	});

	test('ci: lint and unit tests on Node 20 and 22, the real-n8n tests on every pinned n8n', () => {
		const workflow = readWorkflow('ci.yml');
		expect(workflow.on).toHaveProperty('push');
		expect(workflow.on).toHaveProperty('pull_request');
		expect(workflow.jobs.test.strategy.matrix.node).toEqual([20, 22]);
		expect(runs(workflow.jobs.test.steps)).toEqual(
			expect.arrayContaining(['npm run lint', 'npm run test:unit']),
		);
		expect([...workflow.jobs.e2e.strategy.matrix.n8n].sort()).toEqual(
			Object.keys(versions.n8n).sort(),
		);
		expect(workflow.jobs.e2e.env.OUTREACH_N8N_VERSION).toContain('matrix.n8n');
		expect(runs(workflow.jobs.e2e.steps)).toContain('npm run test:e2e');
		for (const command of runs(stepsOf(workflow)).filter((c) => c.startsWith('npm ci')))
			expect(command).toMatch(/--ignore-scripts/);
	});
});
