/**
 * The README's screenshots: each one's file, its caption, and what the editor must show when it is taken
 * (the test asserts every claim before saving the picture, so a caption that stops being true fails).
 */
import path from 'node:path';

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
			'Search "outreach" in the nodes panel: every lead, campaign and message action, by resource.',
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
} satisfies Record<string, Shot>;

export const DOCS_DIR = path.join(PROJECT_ROOT, 'docs');
/** `npm run screenshots` sets this: the pictures go to docs/ instead of a folder of the run. */
export const WRITE_DOCS = process.env.OUTREACH_UI_SCREENSHOTS === 'docs';

/** The Markdown the README shows a screenshot with. */
export function readmeImage(shot: Shot): string {
	return `![${shot.caption}](docs/${shot.file})`;
}
