/**
 * Mapping fields before the first run, in a real browser: a workflow whose Outreach Automation node has
 * never run, the next node opened; its input panel shows the fields of our schema file, as n8n's preview.
 * No request reaches the service. The picture for docs/editor.md is taken here.
 */
import fs from 'node:fs';
import path from 'node:path';

import type { Page } from 'playwright-core';

import { N8N_MAJOR, N8N_VERSION, NODE_TYPES } from '../n8n/runtime';
import { committedSchemaFiles } from '../tools/schemas';
import { recordPicture } from './pictures';
import { DOCS_DIR, SHOTS, WRITE_DOCS } from './shots';
import { OWNER, startUiWorld, stopUiWorld, type UiWorld } from './world';

let world: UiWorld;
let page: Page;

beforeAll(async () => {
	world = await startUiWorld();
	page = world.browser.context.pages()[0] ?? (await world.browser.context.newPage());
	page.setDefaultTimeout(20_000);
	await page.goto(`${world.n8n.url}/signin`);
	await page.getByTestId('emailOrLdapLoginId').locator('input').fill(OWNER.email);
	await page.getByTestId('password').locator('input').fill(OWNER.password);
	await page.getByTestId('form-submit-button').click();
	await page.waitForURL(/\/home\//);
});

afterAll(async () => {
	const failures = (globalThis as { __outreachE2eFailures?: number }).__outreachE2eFailures ?? 0;
	await stopUiWorld(world, failures > 0);
});

/** Manual Trigger -> Outreach Automation (Lead > Get, never run) -> Edit Fields, saved as n8n saves it. */
async function importWorkflow(): Promise<string> {
	const node = (name: string, type: string, typeVersion: number, x: number, parameters = {}) => ({
		id: `preview-${x}`,
		name,
		type,
		typeVersion,
		position: [x, 0],
		parameters,
	});
	const { id } = await world.n8n.rest<{ id: string }>('POST', '/workflows', {
		name: 'Map fields before the first run',
		nodes: [
			node('When clicking ‘Execute workflow’', 'n8n-nodes-base.manualTrigger', 1, 0),
			// n8n leaves out a parameter at its default: Lead is the default resource.
			node('Get a lead', NODE_TYPES.action, 1, 220, {
				operation: 'get',
				leadId: { __rl: true, mode: 'id', value: 'ld_never_asked' },
			}),
			node('Edit Fields', 'n8n-nodes-base.set', 3.4, 440),
		],
		connections: {
			'When clicking ‘Execute workflow’': {
				main: [[{ node: 'Get a lead', type: 'main', index: 0 }]],
			},
			'Get a lead': { main: [[{ node: 'Edit Fields', type: 'main', index: 0 }]] },
		},
		settings: { executionOrder: 'v1' },
		...(N8N_MAJOR < 2 ? { active: false } : {}),
	});
	return id;
}

describe('the schema preview', () => {
	it('the next node shows the fields of Lead > Get before it has ever run', async () => {
		const before = world.sandbox.requests().length;
		const id = await importWorkflow();
		await page.goto(`${world.n8n.url}/workflow/${id}`);
		await page.getByTestId('canvas-node').filter({ hasText: 'Edit Fields' }).dblclick();
		const input = page.getByTestId('ndv-input-panel');
		await input.waitFor();
		const schemaMode = input.getByTestId('radio-button-schema');
		if (await schemaMode.isVisible()) await schemaMode.click();

		const fields = Object.keys(
			JSON.parse(committedSchemaFiles().get('v1.0.0/lead/get.json')!).properties as object,
		);
		let shown = '';
		const deadline = Date.now() + 20_000;
		while (Date.now() < deadline) {
			shown = await input.innerText();
			if (fields.every((field) => shown.includes(field))) break;
			await page.waitForTimeout(250);
		}
		const dump = path.join(world.userFolder, 'preview.png');
		await page.screenshot({ path: dump });
		expect({ n8n: N8N_VERSION, missing: fields.filter((f) => !shown.includes(f)), shown }).toEqual({
			n8n: N8N_VERSION,
			missing: [],
			shown,
		});
		// n8n marks it as a preview ("Usually outputs the following fields ..." in 2.41.1).
		expect(shown).toMatch(/preview|usually outputs/i);
		// Nothing ran: the fields come from the schema file, not from the service.
		expect(world.sandbox.requests().length).toBe(before);

		await page.locator('.el-notification').evaluateAll((els) => els.forEach((e) => e.remove()));
		const file = path.join(WRITE_DOCS ? DOCS_DIR : world.userFolder, SHOTS.schemaPreview.file);
		fs.mkdirSync(path.dirname(file), { recursive: true });
		await page.screenshot({ path: file });
		if (WRITE_DOCS) recordPicture(SHOTS.schemaPreview, N8N_VERSION);
	});
});
