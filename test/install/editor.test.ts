/**
 * n8n's installer as a user drives it, in Chromium: Settings -> Community Nodes -> Install, the package name,
 * the risk box, Install; the card shows what users see of the package; the nodes appear without a restart
 * and a workflow runs; Update to the patch release; Uninstall. The registry is the local one, at npm's
 * default address (see default-registry.ts). The two pictures of docs/installing.md are taken here
 * (`OUTREACH_UI_SCREENSHOTS=docs npm run test:install`, into docs/, each recorded in docs/pictures.json with
 * what the package described: test/ui/pictures.test.ts fails on a picture of a package that has changed).
 */
import fs from 'node:fs';
import path from 'node:path';

import type { Page } from 'playwright-core';

import { N8nServer, PACKAGE_NAME, PROJECT_ROOT } from '../n8n/runtime';
import { ensureChromium, launchBrowser, type Browser } from '../ui/chromium';
import { DESCRIBED, recordPicture } from '../ui/pictures';
import { DOCS_DIR, expectNothingInTheWay, WRITE_DOCS, type Shot } from '../ui/shots';
import { INSTALL_SHOTS } from './shots';
import {
	ALL_TYPES,
	communityPackages,
	freshN8n,
	importLeadsWorkflow,
	installedVersion,
	ourNodeTypes,
	OWNER,
	rehearseRelease,
	runLeads,
	startInstallWorld,
	stopInstallWorld,
	type InstallWorld,
} from './world';

const manifest = JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8'));
const VERSION: string = manifest.version;
const PATCH = VERSION.replace(/\d+$/, (n) => String(Number(n) + 1));

let world: InstallWorld | undefined;
let browser: Browser | undefined;
let n8n: N8nServer | undefined;
let page: Page;
let folder = '';
let shotDir = '';

beforeAll(async () => {
	const executable = ensureChromium((line) => process.stderr.write(`${line}\n`));
	world = await startInstallWorld();
	const released = await rehearseRelease(world, 600_000);
	await world.registry.publishCopy(released.tarball, PATCH);
	const options = await freshN8n(world, 'editor');
	folder = options.userFolder;
	await importLeadsWorkflow(world, options);
	n8n = new N8nServer(world.runtime, options);
	[browser] = await Promise.all([launchBrowser(executable), n8n.start()]);
	await n8n.ensureOwner(OWNER);
	page = browser.context.pages()[0] ?? (await browser.context.newPage());
	page.setDefaultTimeout(30_000);
	shotDir = WRITE_DOCS ? DOCS_DIR : path.join(world.dir, 'screenshots');
	fs.mkdirSync(shotDir, { recursive: true });
});

afterEach(async () => {
	// The last state of each step, to look at when one fails (not kept after a green run).
	if (page && !WRITE_DOCS)
		await page.screenshot({
			path: path.join(shotDir, `after-${expect.getState().currentTestName?.slice(0, 20)}.png`),
		});
});

afterAll(async () => {
	const failed = (globalThis as { __outreachE2eFailures?: number }).__outreachE2eFailures ?? 0;
	await browser?.close();
	await n8n?.stop();
	if (failed && n8n) process.stderr.write(`[editor] n8n's log tail:\n${n8n.logTail(40)}\n`);
	await stopInstallWorld(world, failed > 0);
});

async function screenshot(shot: Shot): Promise<void> {
	await page.screenshot({ path: path.join(shotDir, shot.file) });
	// Beside each picture in docs/: what the package described when it was taken (pictures.test.ts compares).
	if (WRITE_DOCS) recordPicture(shot, world!.runtime.n8nVersion);
}

/** Polls a condition (the editor's actions finish in the background); false after 60 s. */
async function until(condition: () => boolean): Promise<boolean> {
	for (let i = 0; i < 240 && !condition(); i++) await page.waitForTimeout(250);
	return condition();
}

const card = () => page.getByTestId('community-package-card').filter({ hasText: PACKAGE_NAME });

test('signs in and opens Settings -> Community Nodes', async () => {
	await page.goto(`${n8n!.url}/signin`);
	await page.getByTestId('emailOrLdapLoginId').locator('input').fill(OWNER.email);
	await page.getByTestId('password').locator('input').fill(OWNER.password);
	await page.getByTestId('form-submit-button').click();
	await page.waitForURL(/\/home\//);
	await page.goto(`${n8n!.url}/settings/community-nodes`);
	await page.getByRole('button', { name: 'Install a community node' }).waitFor();
});

test('Install: name, risk box, Install; the card and the nodes appear without a restart; a workflow runs', async () => {
	await page.getByRole('button', { name: 'Install a community node' }).click();
	// The older release first, so that the editor has an update to offer afterwards.
	const typed = DESCRIBED.communityInstall().typed as string;
	expect(typed).toBe(`${PACKAGE_NAME}@${VERSION}`);
	await page
		.locator('[data-test-id="package-name-input"] input, input[data-test-id="package-name-input"]')
		.fill(typed);
	await page.getByTestId('user-agreement-checkbox').click();
	expect(await page.getByTestId('install-community-package-button').isEnabled()).toBe(true);
	await screenshot(INSTALL_SHOTS.communityInstall);
	await page.getByTestId('install-community-package-button').click();
	await card().waitFor();
	const text = await card().innerText();
	expect(text).toContain(PACKAGE_NAME);
	// What users see of the package: its name, version and node count with the nodes' names (as recorded).
	const nodes = DESCRIBED.communityInstalled().nodes as string[];
	expect(nodes).toEqual(['Outreach Automation', 'Outreach Automation Trigger']);
	expect(text).toMatch(new RegExp(`${nodes.length} nodes:\\s*${nodes.join(',\\s*')}`));
	expect(text).toContain(VERSION);
	// and Update: the patch release published before the install (beforeAll).
	await card().getByRole('button', { name: 'Update' }).waitFor();
	// The caption's moment: the install dialog closed, the list alone (its toast, which comes and goes, removed).
	await expectNothingInTheWay(page);
	await page.locator('.el-notification').evaluateAll((els) => els.forEach((e) => e.remove()));
	await screenshot(INSTALL_SHOTS.communityInstalled);
	expect(installedVersion(folder)).toBe(VERSION);
	expect(await ourNodeTypes(n8n!)).toEqual(ALL_TYPES);
	const ran = await runLeads(n8n!);
	expect([ran.status, ran.leads.length]).toEqual([200, 3]);
});

test('Update: the card offers the patch release; after it the saved workflow and credential still run', async () => {
	await page.reload();
	await card().getByRole('button', { name: 'Update' }).click();
	await page.getByRole('button', { name: /^Confirm update$/ }).click();
	expect(await until(() => installedVersion(folder) === PATCH)).toBe(true);
	// The folder changes first, n8n's record a moment later.
	let record = (await communityPackages(n8n!))[0];
	for (let i = 0; i < 40 && record?.installedVersion !== PATCH; i++) {
		await page.waitForTimeout(250);
		record = (await communityPackages(n8n!))[0];
	}
	expect(record.installedVersion).toBe(PATCH);
	const after = await n8n!.callWebhook<unknown[]>('install-leads');
	expect([after.status, (after.body as unknown[]).length]).toEqual([200, 3]);
});

test('Uninstall: the nodes leave the panel, the folder and the list', async () => {
	await page.reload();
	await card().getByTestId('action-toggle').click();
	await page.getByText('Uninstall package').click();
	await page.getByRole('button', { name: /^Confirm uninstall$/ }).click();
	expect(await until(() => installedVersion(folder) === undefined)).toBe(true);
	// n8n deletes the folder first and its record a moment later.
	let listed = await communityPackages(n8n!);
	for (let i = 0; i < 40 && listed.length; i++) {
		await page.waitForTimeout(250);
		listed = await communityPackages(n8n!);
	}
	expect(listed).toEqual([]);
	expect(await ourNodeTypes(n8n!)).toEqual([]);
	await card().waitFor({ state: 'detached' });
});
