#!/usr/bin/env node
// The release, in one place: .github/workflows/publish.yml runs it to publish to npm, and `npm run test:install`
// runs it against a local registry (a rehearsal), so the two cannot drift.
//
//   node scripts/release.mjs --registry <url> [--provenance] [--tag <git tag>] [--pack-dir <dir>] [--skip-unit-tests]
//
// Steps: the tag matches package.json's version (when --tag is given), build + lint (`npm run lint` builds),
// unit tests, `npm pack`, checks of the tarball, `npm publish <tarball>`. The registry is never implied: a
// mistyped or missing --registry stops the release instead of falling back to npm's default. --provenance is
// the one step only GitHub Actions can do (an OIDC token signs where the package was built); it is refused
// elsewhere. --skip-unit-tests leaves out that one step (the caller has just run the unit tests, as `.ci/run`
// does before the install test's rehearsal) and keeps every other step in its order; it is refused with
// --provenance: a real release runs them all. Authentication comes from npm's own config (publish.yml:
// setup-node's .npmrc + NODE_AUTH_TOKEN).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');

function parseArgs(argv) {
	const options = { provenance: false };
	for (let i = 0; i < argv.length; i++) {
		const arg = argv[i];
		const value = () => {
			const next = argv[++i];
			if (!next || next.startsWith('--')) throw new Error(`${arg} needs a value`);
			return next;
		};
		if (arg === '--registry') options.registry = value();
		else if (arg === '--provenance') options.provenance = true;
		else if (arg === '--tag') options.tag = value();
		else if (arg === '--pack-dir') options.packDir = value();
		else if (arg === '--skip-unit-tests') options.skipUnitTests = true;
		else throw new Error(`unknown option ${arg}`);
	}
	if (!options.registry) throw new Error('--registry <url> is required (no default, on purpose)');
	if (!/^https?:\/\/[^/\s]+/.test(options.registry))
		throw new Error(`--registry ${options.registry} is not an http(s) URL`);
	if (options.provenance && process.env.GITHUB_ACTIONS !== 'true')
		throw new Error('--provenance needs GitHub Actions (an OIDC token); it cannot be made here');
	if (options.provenance && options.skipUnitTests)
		throw new Error(
			'--skip-unit-tests is for rehearsals: a release with --provenance runs every check',
		);
	return options;
}

// NODE_ENV=test (a test runner's) switches n8n's lint rules into their own self-test mode, where every file
// name is wrong: the steps never inherit it (jest sets it again for the unit tests).
const baseEnv = Object.fromEntries(
	Object.entries(process.env).filter(([name]) => name !== 'NODE_ENV'),
);

const log = (line) => process.stderr.write(`[release] ${line}\n`);

function step(name, command, args, extra = {}) {
	const started = Date.now();
	log(`${name}: ${command} ${args.join(' ')}`);
	const output = execFileSync(command, args, {
		cwd: root,
		stdio: extra.capture ? ['ignore', 'pipe', 'inherit'] : 'inherit',
		encoding: 'utf8',
		env: { ...baseEnv, ...extra.env },
	});
	log(`${name}: done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
	return output;
}

/** What n8n and its scanner refuse in a published package, checked on the tarball itself. */
function checkTarball(tarball, manifest) {
	const listing = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' })
		.split('\n')
		.filter(Boolean);
	const problems = [];
	if (listing.some((entry) => entry.includes('/node_modules/')))
		problems.push('it contains node_modules');
	for (const file of [...manifest.n8n.nodes, ...manifest.n8n.credentials])
		if (!listing.includes(`package/${file}`)) problems.push(`${file} is missing`);
	const packed = JSON.parse(
		execFileSync('tar', ['-xzOf', tarball, 'package/package.json'], { encoding: 'utf8' }),
	);
	if (Object.keys(packed.dependencies ?? {}).length)
		problems.push('it has runtime dependencies (n8n installs none)');
	for (const hook of ['preinstall', 'install', 'postinstall', 'prepare', 'prepublish'])
		if (packed.scripts?.[hook]) problems.push(`it has a ${hook} script`);
	if (problems.length)
		throw new Error(`the packed tarball is not publishable: ${problems.join('; ')}`);
	return listing.length;
}

function main() {
	const options = parseArgs(process.argv.slice(2));
	const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
	const started = Date.now();
	log(`releasing ${manifest.name}@${manifest.version} to ${options.registry}`);
	if (options.tag !== undefined && options.tag !== `v${manifest.version}`)
		throw new Error(`tag ${options.tag} does not match package.json's version ${manifest.version}`);

	step('build and lint', 'npm', ['run', 'lint', '--silent']);
	if (options.skipUnitTests) log('unit tests: skipped (--skip-unit-tests: the caller ran them)');
	else step('unit tests', 'npm', ['run', 'test:unit', '--silent']);

	const packDir = options.packDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'outreach-release-'));
	fs.mkdirSync(packDir, { recursive: true });
	const packed = step(
		'pack',
		'npm',
		['pack', '--json', '--ignore-scripts', '--pack-destination', packDir],
		{ capture: true, env: { npm_config_loglevel: 'error' } },
	);
	const tarball = path.join(packDir, JSON.parse(packed.slice(packed.indexOf('[')))[0].filename);
	const files = checkTarball(tarball, manifest);
	log(`tarball ${tarball}: ${files} files, ${fs.statSync(tarball).size} bytes`);

	step('publish', 'npm', [
		'publish',
		tarball,
		'--registry',
		options.registry,
		'--access',
		'public',
		'--ignore-scripts',
		...(options.provenance ? ['--provenance'] : []),
	]);
	log(
		`published ${manifest.name}@${manifest.version} to ${options.registry} in ${((Date.now() - started) / 1000).toFixed(0)} s`,
	);
	// The last line on stdout: the tarball, for the caller (the install test reuses it).
	process.stdout.write(`${tarball}\n`);
}

try {
	main();
} catch (error) {
	log(`FAILED: ${error.message}`);
	process.exit(1);
}
