/**
 * The example workflows survive being adapted: nothing in them points at this project's playground, their
 * credentials have names a user's own could have, a workflow that starts a campaign or sends a message says
 * so in a sticky note, and in the sync example the settings live in one Set node at the start while no node
 * depends on the sample that stands in for the user's CRM. (Running them: test/e2e.)
 */
import fs from 'node:fs';
import path from 'node:path';

const DIR = path.resolve(__dirname, '..', '..', 'examples');

interface Node {
	name: string;
	type: string;
	parameters: Record<string, unknown>;
	credentials?: Record<string, { id: string; name: string }>;
}
interface Workflow {
	name: string;
	nodes: Node[];
	connections: Record<string, { main: Array<Array<{ node: string }>> }>;
}

const EXAMPLES = fs
	.readdirSync(DIR)
	.filter((file) => file.endsWith('.json'))
	.sort()
	.map((file) => ({
		file,
		workflow: JSON.parse(fs.readFileSync(path.join(DIR, file), 'utf8')) as Workflow,
	}));

const isOutreach = (node: Node) => node.type.startsWith('n8n-nodes-outreach-automation.');
const stickyText = (workflow: Workflow) =>
	workflow.nodes
		.filter((node) => node.type === 'n8n-nodes-base.stickyNote')
		.map((node) => String(node.parameters.content))
		.join('\n');
/** Start a campaign or send a message: contacts real people. */
const contactsPeople = (node: Node) =>
	isOutreach(node) &&
	((node.parameters.resource === 'campaign' && node.parameters.operation === 'start') ||
		(node.parameters.resource === 'message' && node.parameters.operation === 'send'));

describe.each(EXAMPLES)('examples/$file', ({ workflow }) => {
	it("points nowhere at this project's playground or sandbox", () => {
		const found = JSON.stringify(workflow).match(
			/127\.0\.0\.1|localhost|:4010|__sandbox|playground|sandbox/gi,
		);
		expect(found).toBeNull();
	});

	it('names its credentials as a user would (no playground or sandbox in the name)', () => {
		const names = workflow.nodes.flatMap((node) =>
			Object.values(node.credentials ?? {}).map((credential) => credential.name),
		);
		expect(names.length).toBeGreaterThan(0);
		for (const name of names) expect(name).not.toMatch(/sandbox|playground|test|demo/i);
	});

	it('warns in a sticky note before anything that starts a campaign or sends a message', () => {
		const risky = workflow.nodes.filter(contactsPeople);
		if (risky.length) expect(stickyText(workflow)).toMatch(/real people|real leads/i);
	});
});

describe('examples/sync-leads-into-campaign.json', () => {
	const { workflow } = EXAMPLES.find((e) => e.file === 'sync-leads-into-campaign.json')!;
	const node = (name: string) => workflow.nodes.find((n) => n.name === name)!;
	const SAMPLE = 'CRM contacts (sample)';

	it('starts with one Set node of settings, which every trigger leads to', () => {
		const triggers = workflow.nodes.filter((n) => /Trigger$/i.test(n.type));
		expect(triggers.length).toBeGreaterThanOrEqual(2);
		for (const trigger of triggers)
			expect(workflow.connections[trigger.name].main[0].map((c) => c.node)).toEqual(['Settings']);
		expect(node('Settings').type).toBe('n8n-nodes-base.set');
		expect(workflow.connections.Settings.main[0].map((c) => c.node)).toEqual([SAMPLE]);
	});

	it('depends on nothing of the sample: replacing it with a CRM node breaks no node after it', () => {
		// One node, one item per contact; nothing reads it by name or splits a field only it has.
		expect(workflow.connections[SAMPLE].main[0].map((c) => c.node)).toEqual([
			'Create or update lead',
		]);
		const others = workflow.nodes.filter(
			(n) => n.name !== SAMPLE && n.type !== 'n8n-nodes-base.stickyNote',
		);
		expect(JSON.stringify(others.map((n) => n.parameters))).not.toContain(SAMPLE);
		expect(workflow.nodes.some((n) => n.type === 'n8n-nodes-base.splitOut')).toBe(false);
		// The lead list and the campaign's name come from Settings.
		expect(JSON.stringify(node('Create or update lead').parameters)).toContain(
			"$('Settings').first().json.leadListId",
		);
		expect(node('Create or reuse campaign').parameters).toMatchObject({
			name: "={{ $('Settings').first().json.campaignName }}",
			leadListId: "={{ $('Settings').first().json.leadListId }}",
		});
	});

	it("says unpublish, n8n 2.x's word, not deactivate", () => {
		expect(stickyText(workflow)).toMatch(/unpublish/i);
		expect(stickyText(workflow)).not.toMatch(/deactivate the workflow/i);
	});
});
