/**
 * The README's screenshots: each one's file, its caption, and what the editor must show when it is taken
 * (the test asserts every claim before saving the picture, so a caption that stops being true fails).
 */
import path from 'node:path';

import type { Page } from 'playwright-core';

import { PROJECT_ROOT } from '../n8n/runtime';

export interface Shot {
	/** Under docs/. */
	file: string;
	caption: string;
}

export const SHOTS = {
	nodePanel: {
		file: 'node-panel.png',
		caption:
			'The nodes panel, after searching "outreach": Outreach Automation with its 15 actions by resource.',
	},
	leadPicker: {
		file: 'lead-picker.png',
		caption: "Pick a lead From list: the service's leads, filtered as you type.",
	},
	output: {
		file: 'get-many-output.png',
		caption: 'Lead → Get Many with Return All: every lead, one item each, all pages read.',
	},
	triggerEvent: {
		file: 'trigger-test-event.png',
		caption: "The trigger's Fetch Test Event shows the newest message.",
	},
	agentTool: {
		file: 'agent-tool.png',
		caption:
			'The Outreach Automation Tool under an AI Agent: one tool node per operation, here Get many leads.',
	},
	schemaPreview: {
		file: 'schema-preview.png',
		caption:
			"Before Outreach Automation has ever run, the next node's input panel previews the fields of Lead → Get.",
	},
} satisfies Record<string, Shot>;

export const DOCS_DIR = path.join(PROJECT_ROOT, 'docs');
/** `npm run screenshots` sets this: the pictures go to docs/ instead of a folder of the run. */
export const WRITE_DOCS = process.env.OUTREACH_UI_SCREENSHOTS === 'docs';

/**
 * What must not be on screen when a picture is taken: a dialog or its overlay, a loading spinner, or a
 * node's issue or warning mark on the canvas (the red triangle of a node not set up).
 */
const IN_THE_WAY = [
	'[role="dialog"]',
	'.el-overlay',
	'.el-loading-mask',
	'[data-test-id="node-issues"]',
	'[data-test-id="node-setup-required"]',
	'[data-test-id="canvas-node-status-warning"]',
].join(', ');

/**
 * Waits (up to `timeoutMs`) until nothing of IN_THE_WAY is visible; fails naming what still is. Call it
 * right before a picture, so that it shows the moment its caption describes.
 */
export async function expectNothingInTheWay(page: Page, timeoutMs = 30_000): Promise<void> {
	const visible = page.locator(IN_THE_WAY).filter({ visible: true });
	const deadline = Date.now() + timeoutMs;
	while ((await visible.count()) > 0 && Date.now() < deadline) await page.waitForTimeout(250);
	const left = await visible.evaluateAll((els) =>
		els.map(
			(el) => `${el.tagName.toLowerCase()}.${el.className} ${el.textContent?.trim().slice(0, 80)}`,
		),
	);
	if (left.length)
		throw new Error(`On screen where the picture should be clear: ${left.join(' | ')}`);
}

/** The Markdown the README shows a screenshot with. */
export function readmeImage(shot: Shot): string {
	return `![${shot.caption}](docs/${shot.file})`;
}
