/**
 * The provisioning's trust rules, with stand-in parts (the real downloads are exercised by every e2e run
 * and by CI, which starts from an empty cache): a folder is used only when stamped AND verified; anything
 * else, including what an interrupted run leaves, is rebuilt.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { ensurePart, sweepInterrupted, withoutNpmSettings, type Part } from './provision';

let cache: string;
const logs: string[] = [];
const log = (line: string) => logs.push(line);

beforeEach(() => {
	cache = fs.mkdtempSync(path.join(os.tmpdir(), 'provision-test-'));
	logs.length = 0;
});
afterEach(() => fs.rmSync(cache, { recursive: true, force: true }));

/** A part whose install writes a marker file, and whose verification checks it. */
function fakePart(
	counts: { installs: number },
	options: { failInstall?: boolean; verify?: (dir: string) => boolean } = {},
): Part {
	return {
		async install(dir) {
			counts.installs++;
			fs.writeFileSync(path.join(dir, 'half'), '');
			if (options.failInstall) throw new Error('network went away');
			fs.writeFileSync(path.join(dir, 'driver.node'), 'built');
		},
		async verify(dir) {
			const ok = options.verify
				? options.verify(dir)
				: fs.existsSync(path.join(dir, 'driver.node'));
			if (!ok) throw new Error('the driver does not load');
		},
	};
}

test('installs, verifies and stamps; a second run trusts the stamped, verified folder', async () => {
	const counts = { installs: 0 };
	const dir = path.join(cache, 'n8n-x');
	await ensurePart(dir, { n8n: 'x' }, log, 'n8n x', fakePart(counts));
	await ensurePart(dir, { n8n: 'x' }, log, 'n8n x', fakePart(counts));
	expect(counts.installs).toBe(1);
	expect(JSON.parse(fs.readFileSync(path.join(dir, '.provisioned.json'), 'utf8'))).toEqual({
		n8n: 'x',
	});
	expect(fs.readdirSync(cache)).toEqual(['n8n-x']);
});

test('a failed install leaves no folder behind, and says what failed', async () => {
	const dir = path.join(cache, 'n8n-x');
	await expect(
		ensurePart(dir, { n8n: 'x' }, log, 'n8n x', fakePart({ installs: 0 }, { failInstall: true })),
	).rejects.toThrow(/Provisioning n8n x failed: network went away/);
	expect(fs.readdirSync(cache)).toEqual([]);
});

test('an install that does not pass verification is never stamped nor moved into place', async () => {
	const dir = path.join(cache, 'n8n-x');
	await expect(
		ensurePart(dir, { n8n: 'x' }, log, 'n8n x', fakePart({ installs: 0 }, { verify: () => false })),
	).rejects.toThrow(/the driver does not load/);
	expect(fs.existsSync(dir)).toBe(false);
});

test('a folder without a stamp, with another stamp, or failing verification is rebuilt', async () => {
	const dir = path.join(cache, 'n8n-x');
	const counts = { installs: 0 };
	// An older layout (no stamp), e.g. an install whose driver build silently did nothing.
	fs.mkdirSync(dir);
	fs.writeFileSync(path.join(dir, '.complete'), '');
	await ensurePart(dir, { n8n: 'x' }, log, 'n8n x', fakePart(counts));
	expect(counts.installs).toBe(1);
	expect(logs.join('\n')).toMatch(/not trusted, because it has no stamp/);
	// Another version's stamp.
	await ensurePart(dir, { n8n: 'y' }, log, 'n8n y', fakePart(counts));
	expect(counts.installs).toBe(2);
	expect(logs.join('\n')).toMatch(/its stamp says/);
	// Stamped but broken since (the driver deleted).
	fs.rmSync(path.join(dir, 'driver.node'));
	await ensurePart(dir, { n8n: 'y' }, log, 'n8n y', fakePart(counts));
	expect(counts.installs).toBe(3);
	expect(logs.join('\n')).toMatch(/fails verification: the driver does not load/);
	expect(fs.existsSync(path.join(dir, 'driver.node'))).toBe(true);
});

test("an interrupted run's leftovers are removed; a live run's are not", async () => {
	// A partial folder of a process that was killed, and one of a process still running.
	const dead = spawn('true');
	await new Promise((resolve) => dead.once('exit', resolve));
	fs.mkdirSync(path.join(cache, `n8n-x.partial-${dead.pid}`));
	const live = spawn('sleep', ['30']);
	try {
		fs.mkdirSync(path.join(cache, `n8n-x.partial-${live.pid}`));
		fs.mkdirSync(path.join(cache, 'n8n-2.41.1.tmp')); // the previous script's temporary folder
		sweepInterrupted(cache, log);
		expect(fs.readdirSync(cache)).toEqual([`n8n-x.partial-${live.pid}`]);
	} finally {
		live.kill();
	}
});

test('npm settings inherited from `npm run` are not passed to the npm commands it runs', () => {
	const env = withoutNpmSettings({
		PATH: '/bin',
		npm_config_ignore_scripts: 'true',
		NPM_CONFIG_NODEDIR: '/usr',
		npm_lifecycle_event: 'test',
	});
	expect(env).toEqual({ PATH: '/bin' });
});
