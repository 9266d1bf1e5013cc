/**
 * The browser of the UI tests: Debian's `chromium` package (Playwright's own browser download is not
 * reachable here), installed on first use when the tests run as root, driven by playwright-core.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { chromium, selectors, type BrowserContext } from 'playwright-core';

/** OUTREACH_CHROMIUM, or Debian's package. */
export const CHROMIUM = process.env.OUTREACH_CHROMIUM || '/usr/bin/chromium';

/**
 * Makes sure Chromium is there: as root, runs `apt-get update && apt-get install -y chromium` (saying so);
 * otherwise fails with what to install.
 */
export function ensureChromium(log: (line: string) => void): string {
	if (fs.existsSync(CHROMIUM)) return CHROMIUM;
	const isRoot = process.getuid?.() === 0;
	const hasApt = spawnSync('sh', ['-c', 'command -v apt-get'], { stdio: 'ignore' }).status === 0;
	if (!isRoot || !hasApt || process.env.OUTREACH_CHROMIUM) {
		throw new Error(
			`Chromium is not installed (${CHROMIUM} is missing). The UI tests drive Debian's Chromium: ` +
				'install it with `sudo apt-get install -y chromium` (or point OUTREACH_CHROMIUM at a Chromium or ' +
				'Chrome binary), then run `npm run test:ui` again.',
		);
	}
	log(
		"[ui] Chromium is missing: installing Debian's chromium package " +
			'(apt-get update && apt-get install -y chromium; a few minutes) ...',
	);
	execFileSync(
		'sh',
		['-c', 'apt-get update && apt-get install -y --no-install-recommends chromium'],
		{
			stdio: ['ignore', 'ignore', 'inherit'],
			env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
			timeout: 900_000,
		},
	);
	if (!fs.existsSync(CHROMIUM))
		throw new Error(`apt-get installed chromium, but ${CHROMIUM} is still missing`);
	log(`[ui] installed ${CHROMIUM}`);
	return CHROMIUM;
}

export interface Browser {
	context: BrowserContext;
	profile: string;
	close(): Promise<void>;
}

/**
 * Headless Chromium with a new, empty profile, 1280x800. No background networking: on a closed network
 * Chromium's own connections (updates, sync, Google lookups) would only fail.
 */
export async function launchBrowser(executablePath: string): Promise<Browser> {
	// n8n's own attribute for test hooks, so getByTestId finds its elements.
	selectors.setTestIdAttribute('data-test-id');
	const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'outreach-ui-chromium-'));
	const context = await chromium.launchPersistentContext(profile, {
		executablePath,
		headless: true,
		viewport: { width: 1280, height: 800 },
		args: [
			'--no-sandbox',
			'--disable-gpu',
			'--disable-quic',
			'--no-first-run',
			'--disable-background-networking',
			'--disable-component-update',
			'--disable-sync',
		],
	});
	return {
		context,
		profile,
		async close() {
			await context.close().catch(() => undefined);
			fs.rmSync(profile, { recursive: true, force: true });
		},
	};
}
