// Runs n8n's community-package scan the way @n8n/scan-community-package does it, on both of its legs:
//   1. the sources: package.json and {nodes,credentials}/**/*.{js,ts,json}
//   2. the published tarball: every **/*.js plus package.json, from `npm pack` of the current build
// Inline eslint-disable comments are ignored, as the scanner ignores them. Any error or warning fails.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { n8nCommunityNodesPlugin } from '@n8n/eslint-plugin-community-nodes';
import tsParser from '@typescript-eslint/parser';
import { ESLint } from 'eslint';
import { defineConfig } from 'eslint/config';
import n8nNodesPlugin from 'eslint-plugin-n8n-nodes-base';
import fg from 'fast-glob';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');

// Identical to buildScanConfig() of @n8n/scan-community-package 0.32.0.
const scanConfig = defineConfig(
	n8nCommunityNodesPlugin.configs.recommended,
	{ rules: { 'no-console': 'error' } },
	{ plugins: { 'n8n-nodes-base': n8nNodesPlugin } },
	{ files: ['package.json'], rules: { ...n8nNodesPlugin.configs.community.rules } },
	{
		files: ['**/credentials/**/*.ts'],
		rules: {
			...n8nNodesPlugin.configs.credentials.rules,
			'n8n-nodes-base/cred-class-field-documentation-url-miscased': 'off',
			'n8n-nodes-base/cred-class-field-type-options-password-missing': 'off',
		},
	},
	{
		files: ['**/nodes/**/*.ts'],
		rules: {
			...n8nNodesPlugin.configs.nodes.rules,
			'n8n-nodes-base/node-class-description-inputs-wrong-regular-node': 'off',
			'n8n-nodes-base/node-class-description-outputs-wrong': 'off',
			'n8n-nodes-base/node-param-type-options-max-value-present': 'off',
		},
	},
	{ files: ['**/*.json'], languageOptions: { parser: tsParser } },
	{ files: ['**/*.ts'], languageOptions: { parser: tsParser } },
);

async function lintLeg(name, cwd, patterns) {
	const eslint = new ESLint({
		cwd,
		allowInlineConfig: false,
		overrideConfigFile: true,
		overrideConfig: scanConfig,
	});
	const files = fg.sync(patterns, {
		cwd,
		absolute: true,
		ignore: ['node_modules/**', '**/package-lock.json'],
	});
	const results = await eslint.lintFiles(files);
	const problems = results.reduce((n, r) => n + r.errorCount + r.warningCount, 0);
	const formatter = await eslint.loadFormatter('stylish');
	const report = await formatter.format(results);
	process.stdout.write(`lint ${name}: ${files.length} files, ${problems} problem(s)\n${report}`);
	return problems;
}

if (!fs.existsSync(path.join(root, 'dist'))) {
	console.error('lint: dist/ is missing; run `npm run build` first (npm run lint does).');
	process.exit(1);
}

const packDir = fs.mkdtempSync(path.join(os.tmpdir(), 'outreach-lint-pack-'));
try {
	let problems = await lintLeg('sources', root, [
		'package.json',
		'{nodes,credentials}/**/*.{js,ts,json}',
	]);
	const tarball = execFileSync('npm', ['pack', '--silent', '--pack-destination', packDir], {
		cwd: root,
		encoding: 'utf8',
	})
		.trim()
		.split('\n')
		.pop();
	execFileSync('tar', ['-xzf', path.join(packDir, tarball), '-C', packDir]);
	problems += await lintLeg('published package', path.join(packDir, 'package'), [
		'**/*.js',
		'package.json',
	]);
	if (problems > 0) {
		console.error(`lint: ${problems} problem(s); n8n's verification scan requires none.`);
		process.exit(1);
	}
} finally {
	fs.rmSync(packDir, { recursive: true, force: true });
}
