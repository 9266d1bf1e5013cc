/**
 * The world of the UI tests: the sandbox API, a fresh n8n user folder with the packed package installed,
 * one `n8n start` with an owner account, and one headless Chromium. No credential is imported: the first
 * flow creates it in the editor, as a user would.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { startSandbox, type Sandbox } from '../sandbox/server';
import {
	freePort,
	N8nServer,
	packAndInstall,
	provision,
	reportOrClean,
	type Owner,
} from '../n8n/runtime';
import { ensureChromium, launchBrowser, type Browser } from './chromium';

export const OWNER: Owner = {
	email: 'ui-owner@example.com',
	password: `Ui-${randomBytes(9).toString('base64url')}1`,
	firstName: 'UI',
	lastName: 'Owner',
};

export interface UiWorld {
	sandbox: Sandbox;
	n8n: N8nServer;
	browser: Browser;
	userFolder: string;
}

const log = (line: string) => process.stderr.write(`${line}\n`);

export async function startUiWorld(): Promise<UiWorld> {
	const executable = ensureChromium(log);
	const userFolder = fs.mkdtempSync(path.join(os.tmpdir(), 'outreach-ui-'));
	(globalThis as { __outreachE2eUserFolder?: string }).__outreachE2eUserFolder = userFolder;
	let sandbox: Sandbox | undefined;
	let n8n: N8nServer | undefined;
	let browser: Browser | undefined;
	try {
		const runtime = await provision();
		// 250 leads: Get Many with Return All reads three pages of 100.
		sandbox = await startSandbox({
			seed: { leads: 250, campaigns: 4, messages: 120, seed: 17 },
			apiKeys: [`ui-${randomBytes(12).toString('hex')}`],
		});
		await packAndInstall(userFolder);
		n8n = new N8nServer(runtime, {
			userFolder,
			port: await freePort(),
			brokerPort: await freePort(),
		});
		[browser] = await Promise.all([launchBrowser(executable), n8n.start()]);
		await n8n.ensureOwner(OWNER);
		return { sandbox, n8n, browser, userFolder };
	} catch (error) {
		await browser?.close();
		await n8n?.stop();
		await sandbox?.stop();
		log(`\n[ui] setup failed; n8n user folder kept: ${userFolder}`);
		throw error;
	}
}

export async function stopUiWorld(world: UiWorld | undefined, failed: boolean): Promise<void> {
	if (!world) return;
	await world.browser.close();
	await world.n8n.stop();
	await world.sandbox.stop();
	reportOrClean('ui', world.n8n, world.userFolder, failed, 40);
}
