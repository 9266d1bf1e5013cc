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

type WorkflowNode = { name: string; type: string; parameters?: Record<string, unknown> };

/** A chain of nodes ending in Edit Fields, saved through n8n's REST API as the editor saves it. */
async function importChain(name: string, chain: WorkflowNode[]): Promise<string> {
	const nodes = [
		...chain,
		{ name: 'Edit Fields', type: 'n8n-nodes-base.set', typeVersion: 3.4 },
	].map((node, i) => ({
		id: `preview-${i}`,
		typeVersion: 1,
		position: [i * 220, 0],
		parameters: {},
		...node,
	}));
	const { id } = await world.n8n.rest<{ id: string }>('POST', '/workflows', {
		name,
		nodes,
		connections: Object.fromEntries(
			nodes
				.slice(0, -1)
				.map((node, i) => [
					node.name,
					{ main: [[{ node: nodes[i + 1].name, type: 'main', index: 0 }]] },
				]),
		),
		settings: { executionOrder: 'v1' },
		...(N8N_MAJOR < 2 ? { active: false } : {}),
	});
	return id;
}

/** Whether the panel's text shows `field` as a name of its own ("id", not "lead_id" or "valid"). */
const lists = (text: string, field: string) => new RegExp(`(?<![\\w.$])${field}(?!\\w)`).test(text);

/** Opens the workflow's Edit Fields; its input panel in Schema view, once it shows `fields` (or 20 s). */
async function inputOfEditFields(id: string, fields: string[]): Promise<string> {
	await page.goto(`${world.n8n.url}/workflow/${id}`);
	await page.getByTestId('canvas-node').filter({ hasText: 'Edit Fields' }).dblclick();
	const input = page.getByTestId('ndv-input-panel');
	await input.waitFor();
	const schemaMode = input.getByTestId('radio-button-schema');
	if (await schemaMode.isVisible()) await schemaMode.click();
	let shown = '';
	const deadline = Date.now() + 20_000;
	while (Date.now() < deadline) {
		shown = await input.innerText();
		if (fields.every((field) => lists(shown, field))) break;
		await page.waitForTimeout(250);
	}
	await page.screenshot({ path: path.join(world.userFolder, `preview-${id}.png`) });
	return shown;
}

const fieldsOf = (file: string) =>
	Object.keys(JSON.parse(committedSchemaFiles().get(file)!).properties as object);

describe('the schema preview', () => {
	it('the next node shows the fields of Lead > Get before it has ever run', async () => {
		const before = world.sandbox.requests().length;
		const id = await importChain('Map fields before the first run', [
			{ name: 'When clicking ‘Execute workflow’', type: 'n8n-nodes-base.manualTrigger' },
			// n8n leaves out a parameter at its default: Lead is the default resource.
			{
				name: 'Get a lead',
				type: NODE_TYPES.action,
				parameters: { operation: 'get', leadId: { __rl: true, mode: 'id', value: 'ld_never' } },
			},
		]);
		const fields = fieldsOf('v1.0.0/lead/get.json');
		const shown = await inputOfEditFields(id, fields);
		expect({ n8n: N8N_VERSION, missing: fields.filter((f) => !lists(shown, f)), shown }).toEqual({
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

	// n8n 2.x's editor shows no preview for a trigger (its own choice, for every trigger); 1.x's does.
	it(`the trigger's fields: ${N8N_MAJOR >= 2 ? 'no preview in 2.x' : 'previewed in 1.x'}`, async () => {
		const before = world.sandbox.requests().length;
		const id = await importChain('Trigger fields before the first event', [
			{ name: 'Outreach Automation Trigger', type: NODE_TYPES.trigger },
		]);
		const fields = fieldsOf('v1.0.0.json');
		const shown = await inputOfEditFields(id, fields);
		if (N8N_MAJOR >= 2) {
			// Names only a message has (a bare "id" or "status" can be any text of the panel).
			const own = fields.filter((f) => f.includes('_') || f === 'direction');
			expect({ listed: own.filter((f) => lists(shown, f)), shown }).toEqual({
				listed: [],
				shown: expect.stringContaining('Execute previous nodes'),
			});
		} else {
			expect({ missing: fields.filter((f) => !lists(shown, f)), shown }).toEqual({
				missing: [],
				shown,
			});
		}
		expect(world.sandbox.requests().length).toBe(before);
	});
});
