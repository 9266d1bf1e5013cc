/** The package as users get it: `npm pack` of the built project, unpacked into an n8n user folder. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { PACKAGE_NAME, PROJECT_ROOT } from './config';
import { run } from './processes';

// ---------------------------------------------------------------------------------------------------------
// The package, as users get it

/** Fails with a clear message when dist/ is missing or stale: the package is built from it. */
export function assertBuilt(): void {
	const manifest = JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8'));
	const files: string[] = [...manifest.n8n.nodes, ...manifest.n8n.credentials];
	const missing = files.filter((file) => !fs.existsSync(path.join(PROJECT_ROOT, file)));
	if (missing.length) {
		throw new Error(
			`The package is not built (missing ${missing.join(', ')}): run \`npm run build\` first.`,
		);
	}
	for (const file of files) {
		const source = path.join(PROJECT_ROOT, file.replace(/^dist\//, '').replace(/\.js$/, '.ts'));
		if (
			fs.existsSync(source) &&
			fs.statSync(source).mtimeMs > fs.statSync(path.join(PROJECT_ROOT, file)).mtimeMs
		) {
			throw new Error(`${file} is older than its source: run \`npm run build\` first.`);
		}
	}
}

/** `npm pack` of the project into `destDir`; returns the tarball's path. */
export async function packPackage(destDir: string): Promise<string> {
	assertBuilt();
	fs.mkdirSync(destDir, { recursive: true });
	const { stdout } = await run(
		'npm',
		['pack', '--json', '--ignore-scripts', '--pack-destination', destDir],
		{
			env: { ...process.env, npm_config_loglevel: 'error' },
			timeoutMs: 120_000,
		},
	);
	const [{ filename }] = JSON.parse(stdout.slice(stdout.indexOf('['))) as Array<{
		filename: string;
	}>;
	return path.join(destDir, filename);
}

/** Where n8n looks for installed community packages. */
export function packageDir(userFolder: string): string {
	return path.join(userFolder, '.n8n', 'nodes', 'node_modules', PACKAGE_NAME);
}

/**
 * Unpacks the tarball into `<userFolder>/.n8n/nodes/node_modules/<package>/`, replacing any previous copy:
 * package.json and dist only, no node_modules (n8n-workflow comes from n8n itself).
 */
export async function installPackage(userFolder: string, tarball: string): Promise<string> {
	const target = packageDir(userFolder);
	fs.rmSync(target, { recursive: true, force: true });
	fs.mkdirSync(target, { recursive: true });
	await run('tar', ['-xzf', tarball, '-C', target, '--strip-components=1']);
	if (fs.existsSync(path.join(target, 'node_modules')))
		throw new Error('The packed package contains node_modules');
	return target;
}

/** Packs the project and installs it into the user folder; returns the installed package's folder. */
export async function packAndInstall(userFolder: string): Promise<string> {
	const packDir = fs.mkdtempSync(path.join(os.tmpdir(), 'outreach-pack-'));
	try {
		return await installPackage(userFolder, await packPackage(packDir));
	} finally {
		fs.rmSync(packDir, { recursive: true, force: true });
	}
}
