/**
 * What a user sees in n8n's editor, in a real browser: signing in, creating the credential (tested by n8n),
 * finding the nodes in the nodes panel, picking a lead from the list, running operations, the trigger's
 * Fetch Test Event and publishing, and the node as an AI Agent tool. The README's screenshots are taken here
 * (see shots.ts), each after asserting what its caption claims.
 */
import fs from 'node:fs';
import path from 'node:path';

import type { Locator, Page } from 'playwright-core';

import { PROJECT_ROOT } from '../n8n/runtime';
import { DOCS_DIR, readmeImage, SHOTS, WRITE_DOCS, type Shot } from './shots';
import { OWNER, startUiWorld, stopUiWorld, type UiWorld } from './world';

const CREDENTIAL_NAME = 'Outreach Automation account';
const LEAD_ACTIONS = [
	'Create a lead',
	'Delete a lead',
	'Get a lead',
	'Get many leads',
	'Update a lead',
];
const CAMPAIGN_ACTIONS = [
	'Create a campaign',
	'Get a campaign',
	'Get analytics of a campaign',
	'Get many campaigns',
	'Pause a campaign',
	'Start a campaign',
];
const MESSAGE_ACTIONS = ['Get a message', 'Get many messages', 'Send a message'];
const LEAD_OPERATIONS = {
	Create: 'Create a new lead',
	Delete: 'Delete a lead',
	Get: 'Get a lead by ID',
	'Get Many': 'List leads, optionally filtered by search text or campaign',
	Update: 'Change some fields of a lead, leaving the others as they are',
};

let world: UiWorld;
let page: Page;
let shotDir: string;
let createdLeadId = '';

beforeAll(async () => {
	world = await startUiWorld();
	page = world.browser.context.pages()[0] ?? (await world.browser.context.newPage());
	page.setDefaultTimeout(20_000);
	shotDir = WRITE_DOCS ? DOCS_DIR : path.join(world.userFolder, 'screenshots');
	fs.mkdirSync(shotDir, { recursive: true });
});

afterAll(async () => {
	const failures = (globalThis as { __outreachE2eFailures?: number }).__outreachE2eFailures ?? 0;
	await stopUiWorld(world, failures > 0);
});

async function screenshot(shot: Shot): Promise<void> {
	// Toasts come and go; the pictures should not depend on when they were taken.
	await page.locator('.el-notification').evaluateAll((els) => els.forEach((e) => e.remove()));
	await page.screenshot({ path: path.join(shotDir, shot.file) });
}

const ndv = () => page.getByTestId('ndv');
const nodeCreator = () => page.getByTestId('node-creator');
const creatorItem = (name: string | RegExp) =>
	page.getByTestId('node-creator-item-name').filter({ hasText: name }).first();

async function newWorkflow(): Promise<void> {
	await page.goto(`${world.n8n.url}/workflow/new`);
	await page.getByTestId('canvas-plus-button').waitFor();
}

async function addManualTrigger(): Promise<void> {
	await page.getByTestId('canvas-plus-button').click();
	await page.keyboard.type('manual');
	await creatorItem('Manual Trigger').click();
	await page.getByTestId('canvas-handle-plus').waitFor();
}

/** From the manual trigger's "+": search "outreach", open the node, pick an action; the NDV opens. */
async function addOutreachAction(action: string): Promise<void> {
	await page.getByTestId('canvas-handle-plus').first().click();
	await page.keyboard.type('outreach');
	await creatorItem('Outreach Automation').click();
	await creatorItem(action).click();
	await ndv().waitFor();
}

async function chooseOption(parameter: string, option: RegExp): Promise<void> {
	await ndv().getByTestId(`parameter-input-${parameter}`).click();
	await page.getByRole('option').filter({ hasText: option }).click();
}

/** Waits for the output panel to show `expected` (e.g. "1 item"); a previous run's count may linger. */
async function expectItemCount(expected: string): Promise<void> {
	const count = page.getByTestId('output-panel').getByTestId('ndv-items-count');
	let shown = '';
	await waitUntil(async () => {
		shown = (await count.innerText().catch(() => '')).trim();
		return shown === expected;
	}, `the output to show ${expected}`).catch(() => undefined);
	expect(shown).toBe(expected);
}

/** Sequence number of the sandbox's last logged request (for requests(since)). */
function lastRequest(): number {
	const log = world.sandbox.requests();
	return log.length ? log[log.length - 1].seq : 0;
}

/** Polls `check` (the editor updates asynchronously) until it holds; fails naming what was awaited. */
async function waitUntil(check: () => Promise<boolean>, what: string, timeoutMs = 15_000) {
	const deadline = Date.now() + timeoutMs;
	while (!(await check())) {
		if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
		await page.waitForTimeout(200);
	}
}

/** Waits until `scope` shows every text (tables render after the item count); fails naming what is missing. */
async function expectVisibleTexts(scope: Locator, texts: string[]): Promise<void> {
	let shown = '';
	await waitUntil(
		async () => {
			shown = await scope.innerText();
			return texts.every((text) => shown.includes(text));
		},
		`${texts.join(', ')} to be shown`,
	).catch(() => undefined);
	for (const text of texts) expect(shown).toContain(text);
}

describe('in the editor', () => {
	it('signs in', async () => {
		await page.goto(`${world.n8n.url}/signin`);
		await page.getByTestId('emailOrLdapLoginId').locator('input').fill(OWNER.email);
		await page.getByTestId('password').locator('input').fill(OWNER.password);
		await page.getByTestId('form-submit-button').click();
		await page.waitForURL(/\/home\//);
	});

	it('creates the credential: a wrong key gets a clear error, the right one "Connection tested successfully"', async () => {
		await page.goto(`${world.n8n.url}/home/credentials/create`);
		await page.getByTestId('new-credential-type-select').locator('input').fill('Outreach');
		await page
			.getByTestId('new-credential-type-select-option')
			.filter({ hasText: 'Outreach Automation API' })
			.click();
		await page.getByTestId('new-credential-type-button').click();
		const modal = page.getByTestId('editCredential-modal');
		await expect(
			modal.getByTestId('parameter-input-baseUrl').locator('input').getAttribute('placeholder'),
		).resolves.toBe('https://api.your-outreach-service.com');

		await modal.getByTestId('parameter-input-baseUrl').locator('input').fill(world.sandbox.url);
		await modal.getByTestId('parameter-input-apiKey').locator('input').fill('not-the-right-key');
		await modal.getByTestId('credential-save-button').click();
		await modal.getByText('Couldn’t connect with these settings').waitFor();
		await modal.getByText('More details').click();
		await modal
			.getByText(
				/^The API key was refused \(HTTP 401\)\. Check that it is complete and still valid/,
			)
			.waitFor();
		// The key the user typed is never shown back.
		expect(await modal.innerText()).not.toContain('not-the-right-key');

		await modal.getByTestId('parameter-input-apiKey').locator('input').fill(world.sandbox.apiKey);
		await modal.getByTestId('credential-save-button').click();
		await modal.getByTestId('credentials-config-container-test-success').waitFor();
		await expect(
			modal.getByTestId('credentials-config-container-test-success').innerText(),
		).resolves.toContain('Connection tested successfully');
		await page.keyboard.press('Escape');
	});

	it('finds the node by searching "outreach": every action, grouped by resource', async () => {
		await newWorkflow();
		await addManualTrigger();
		await page.getByTestId('canvas-handle-plus').first().click();
		await page.keyboard.type('outreach');
		await creatorItem('Outreach Automation').click();
		const creator = nodeCreator();
		await creator.getByText('Actions (14)').waitFor();
		await expectVisibleTexts(creator, [
			'CAMPAIGN ACTIONS',
			'LEAD ACTIONS',
			'MESSAGE ACTIONS',
			...LEAD_ACTIONS,
			...CAMPAIGN_ACTIONS,
			...MESSAGE_ACTIONS,
		]);
		// The panel lists both nodes under one entry with the trigger's description: it must fit the whole.
		await expectVisibleTexts(creator, [
			'Starts a workflow on each new message',
			'manages leads, campaigns and messages',
		]);
		// Tall enough for all fourteen actions in one picture.
		await page.setViewportSize({ width: 1280, height: 1080 });
		await screenshot(SHOTS.nodePanel);
		await page.setViewportSize({ width: 1280, height: 800 });
	});

	it('lists each lead operation with its description in the Operation field', async () => {
		await creatorItem('Create a lead').click();
		await ndv().waitFor();
		await ndv().getByTestId('parameter-input-operation').click();
		const options = page.getByRole('option');
		for (const [name, description] of Object.entries(LEAD_OPERATIONS))
			await expect(options.filter({ hasText: name }).first().innerText()).resolves.toContain(
				description,
			);
		await page.keyboard.press('Escape');
	});

	it('runs Create Lead from the editor: the output shows the created lead', async () => {
		const before = world.sandbox.store.leads.size;
		await chooseOption('operation', /^Create/);
		await expect(
			ndv().getByTestId('parameter-input-firstName').locator('input').getAttribute('placeholder'),
		).resolves.toBe('e.g. Ada');
		await ndv().getByTestId('parameter-input-firstName').locator('input').fill('Grace');
		await ndv().getByTestId('parameter-input-lastName').locator('input').fill('Hopper');
		await ndv().getByTestId('parameter-input-company').locator('input').fill('Navy Labs');
		await ndv().getByTestId('node-execute-button').click();
		await expectItemCount('1 item');
		const created = [...world.sandbox.store.leads.values()].filter(
			(lead) => lead.last_name === 'Hopper',
		);
		expect(created).toHaveLength(1);
		createdLeadId = created[0].id;
		expect(world.sandbox.store.leads.size).toBe(before + 1);
		await expectVisibleTexts(page.getByTestId('output-panel'), [
			created[0].id,
			'Grace',
			'Navy Labs',
		]);
	});

	it('runs Get Many with Return All: the output shows every lead', async () => {
		await chooseOption('operation', /^Get Many/);
		await ndv().getByTestId('parameter-input-returnAll').locator('.el-switch').click();
		// The editor removes Limit once Return All is on; it re-renders after the click, not within it.
		await ndv().getByTestId('parameter-input-limit').waitFor({ state: 'detached' });
		const since = lastRequest();
		await ndv().getByTestId('node-execute-button').click();
		const total = world.sandbox.store.leads.size;
		expect(total).toBeGreaterThan(200);
		await expectItemCount(`${total} items`);
		// All pages read, each once: 251 leads at 100 per page.
		const pages = world.sandbox
			.requests(since)
			.filter((r) => r.method === 'GET' && r.path === '/api/v1/leads')
			.map((r) => r.query.page);
		expect(pages).toEqual(['1', '2', '3']);
		await screenshot(SHOTS.output);
	});

	it('picks a lead From list: the sandbox leads, filtered as you type', async () => {
		await chooseOption('operation', /^Get\s*Get a lead by ID/);
		const locator = ndv().getByTestId('resource-locator-leadId');
		await expect(
			locator.getByTestId('rlc-mode-selector').locator('input').inputValue(),
		).resolves.toBe('From list');
		await locator.getByTestId('rlc-input').click();
		const items = page.getByTestId('rlc-item');
		await items.first().waitFor();
		// Newest first: the lead the previous flow created.
		await expect(items.first().innerText()).resolves.toContain(createdLeadId);
		const target = [...world.sandbox.store.leads.values()].find((l) => l.last_name !== 'Hopper')!;
		await page.getByTestId('rlc-search').fill(target.last_name);
		await waitUntil(async () => {
			const shown = await items.allInnerTexts();
			return shown.length > 0 && shown.every((text) => text.includes(target.last_name));
		}, `the list to show only leads named ${target.last_name}`);
		await expect(items.filter({ hasText: target.id }).count()).resolves.toBe(1);
		await screenshot(SHOTS.leadPicker);
		await items.filter({ hasText: target.id }).click();
		await ndv().getByTestId('node-execute-button').click();
		await expectItemCount('1 item');
		await page.getByTestId('ndv-close-button').click();
	});
});

describe('the trigger', () => {
	it('Fetch Test Event shows the newest message; publishing the workflow works', async () => {
		const newest = world.sandbox.reply({ body: 'Newest reply, seen in the editor' });
		await newWorkflow();
		await page.getByTestId('canvas-plus-button').click();
		await page.keyboard.type('outreach');
		await creatorItem('Outreach Automation').click();
		await creatorItem('On new Outreach Automation event').click();
		await ndv().waitFor();
		await expect(ndv().getByTestId('node-execute-button').innerText()).resolves.toContain(
			'Fetch Test Event',
		);
		await ndv().getByTestId('node-execute-button').click();
		await expectItemCount('1 item');
		await page.getByTestId('output-panel').getByTestId('radio-button-json').click();
		await expectVisibleTexts(page.getByTestId('output-panel'), [newest.id, newest.body]);
		await screenshot(SHOTS.triggerEvent);

		await page.getByTestId('ndv-close-button').click();
		await page.getByTestId('workflow-open-publish-modal-button').click();
		await page.getByTestId('workflow-publish-button').click();
		await page.getByText('Workflow published').waitFor();
		await page.getByTestId('workflow-active-version-indicator').waitFor();
		const workflowId = /\/workflow\/([^/?#]+)/.exec(page.url())![1];
		await waitUntil(async () => {
			const status = await world.n8n.rest<{ status: string }>(
				'GET',
				`/workflows/${workflowId}/publication-status`,
			);
			return status.status === 'published';
		}, 'n8n to report the workflow published');
	});
});

describe('the AI Agent', () => {
	it('offers Outreach Automation as a tool', async () => {
		await newWorkflow();
		await addManualTrigger();
		await page.getByTestId('canvas-handle-plus').first().click();
		await page.keyboard.type('AI Agent');
		await creatorItem(/^AI Agent$/).click();
		// Adding the agent may open its panel; back to the canvas.
		if (await ndv().isVisible()) await page.getByTestId('ndv-close-button').click();
		await page
			.locator('[data-test-id=canvas-node-input-handle][data-connection-type=ai_tool]')
			.getByTestId('canvas-handle-plus')
			.click();
		await page.keyboard.type('outreach');
		const tool = creatorItem('Outreach Automation Tool');
		await tool.waitFor();
		await tool.click();
		await ndv().waitFor();
		await expect(ndv().getByTestId('parameter-input-resource').count()).resolves.toBe(1);

		// The Tool Description a model reads follows the operation; Get Many as a tool defaults to Limit 10.
		const toolDescription = async () =>
			ndv()
				.getByTestId('parameter-input-toolDescription')
				.locator('textarea, input')
				.first()
				.inputValue();
		await expect(toolDescription()).resolves.toMatch(/^Creates a new lead in Outreach Automation/);
		await chooseOption('operation', /^Get Many/);
		await waitUntil(
			async () => (await toolDescription().catch(() => '')).startsWith('Lists leads'),
			'the Get Many tool description',
		);
		await expect(
			ndv().getByTestId('parameter-input-limit').locator('input').first().inputValue(),
		).resolves.toBe('10');
		await page.getByTestId('ndv-close-button').click();
		await page.getByTestId('canvas-node').filter({ hasText: 'Outreach' }).first().waitFor();
		await screenshot(SHOTS.agentTool);
	});
});

describe('the README', () => {
	it('shows every screenshot with its caption in "In the editor", near the top', () => {
		const readme = fs.readFileSync(path.join(PROJECT_ROOT, 'README.md'), 'utf8');
		const section = readme.indexOf('## In the editor');
		expect(section).toBeGreaterThan(0);
		expect(section).toBeLessThan(readme.indexOf('## Installation'));
		for (const shot of Object.values(SHOTS)) {
			expect(readme).toContain(readmeImage(shot));
			expect(fs.existsSync(path.join(DOCS_DIR, shot.file))).toBe(true);
		}
	});
});
