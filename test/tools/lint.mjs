// n8n's own lint tools, called as they are (nothing copied, so nothing drifts):
//   1. `n8n-node lint`'s ESLint configuration (@n8n/node-cli/eslint) over the sources n8n-node lints
//      (package.json and nodes/, credentials/), inline eslint-disable comments ignored;
//   2. @n8n/scan-community-package's own analyzePackage(), the analysis n8n's verification runs, on both of
//      its legs: the sources (its SOURCE_FILE_PATTERNS) and the published tarball (`npm pack` of the
//      current build, unpacked; every **/*.js plus package.json, as the scanner's CLI scans it).
// Any error or warning of the first, any failure of the second fails `npm run lint`.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { config as n8nNodeLintConfig } from '@n8n/node-cli/eslint';
import { ESLint } from 'eslint';

const scannerModule = createRequire(import.meta.url).resolve(
	'@n8n/scan-community-package/scanner/scanner.mjs',
);
// The scanner makes a temporary folder when it loads (for its registry downloads, unused here):
// have it removed at exit.
createRequire(scannerModule)('tmp').setGracefulCleanup();
const { analyzePackage, SOURCE_FILE_PATTERNS } = await import(scannerModule);

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

async function nodeCliLint() {
	const eslint = new ESLint({
		cwd: root,
		allowInlineConfig: false,
		overrideConfigFile: true,
		overrideConfig: n8nNodeLintConfig,
		// The node type descriptions (*.node.json) match no entry of the configuration: skip them quietly.
		warnIgnored: false,
	});
	const results = await eslint.lintFiles(SOURCE_FILE_PATTERNS);
	const problems = results.reduce((n, r) => n + r.errorCount + r.warningCount, 0);
	const report = await (await eslint.loadFormatter('stylish')).format(results);
	process.stdout.write(
		`lint n8n-node (@n8n/node-cli/eslint): ${results.length} files, ${problems} problem(s)\n${report}`,
	);
	return problems;
}

async function scan(name, dir, patterns) {
	const result = await analyzePackage(dir, patterns);
	process.stdout.write(
		`lint scan ${name} (@n8n/scan-community-package analyzePackage): ${result.passed ? 'passed' : 'FAILED'}` +
			`${result.message ? ` (${result.message})` : ''}\n${result.details ?? ''}`,
	);
	return result.passed ? 0 : 1;
}

if (!fs.existsSync(path.join(root, 'dist'))) {
	console.error('lint: dist/ is missing; run `npm run build` first (npm run lint does).');
	process.exit(1);
}

const packDir = fs.mkdtempSync(path.join(os.tmpdir(), 'outreach-lint-pack-'));
try {
	let failures = (await nodeCliLint()) > 0 ? 1 : 0;
	failures += await scan('sources', root, SOURCE_FILE_PATTERNS);
	const tarball = execFileSync('npm', ['pack', '--silent', '--pack-destination', packDir], {
		cwd: root,
		encoding: 'utf8',
	})
		.trim()
		.split('\n')
		.pop();
	execFileSync('tar', ['-xzf', path.join(packDir, tarball), '-C', packDir]);
	failures += await scan('published package', path.join(packDir, 'package'), [
		'**/*.js',
		'package.json',
	]);
	if (failures > 0) {
		console.error(`lint: ${failures} check(s) failed; n8n's verification requires none.`);
		process.exitCode = 1;
	}
} finally {
	fs.rmSync(packDir, { recursive: true, force: true });
}
