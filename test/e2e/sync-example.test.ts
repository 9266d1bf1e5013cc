/**
 * The example `sync-leads-into-campaign.json`, run twice with `n8n execute` in a real n8n, as its schedule
 * would: the first run creates the leads and the campaign and starts it; the second creates 0 leads and 0
 * campaigns, starts nothing new and succeeds. Then again against the same contacts already stored in the
 * spellings other tools leave (no scheme, a country host, the mobile host), by a service that stores what it
 * is sent in such a spelling: 0 leads created either time, nothing written the second time.
 */
import fs from 'node:fs';
import path from 'node:path';

import type { ExecuteResult } from '../n8n/runtime';
import { executeWorkflow } from '../n8n/runtime';
import { EXAMPLES_DIR } from './harness';
import { startLightWorld, stopLightWorld, type LightWorld } from './light-world';
import type { WorkflowJson } from './workflows';

const TAG = 'sync-example';
const EXAMPLE = 'sync-leads-into-campaign.json';
const LEAD_NODE = 'Create or update lead';
const CAMPAIGN_NODE = 'Create or reuse campaign';
const START_NODE = 'Start campaign';

describe('the sync example run twice', () => {
	let world: LightWorld | undefined;
	let workflowId: string;

	beforeAll(async () => {
		const example = JSON.parse(
			fs.readFileSync(path.join(EXAMPLES_DIR, EXAMPLE), 'utf8'),
		) as WorkflowJson;
		workflowId = example.id;
		world = await startLightWorld(TAG, [example]);
	}, 30 * 60_000);

	afterAll(async () => {
		const failed = Boolean(
			(globalThis as { __outreachE2eFailures?: number }).__outreachE2eFailures,
		);
		await stopLightWorld(TAG, world, failed);
	}, 60_000);

	const outputOf = (run: ExecuteResult) => (node: string) =>
		(run.data.resultData.runData[node]?.[0]?.data?.main[0] ?? []).map((item) => item.json);

	test('the first run creates the leads on the list and one campaign for it, and starts it', async () => {
		const { sandbox, runtime, options } = world!;
		const run = await executeWorkflow(runtime, options, workflowId);
		expect(run.data.resultData.error).toBeUndefined();
		const output = outputOf(run);
		expect(output(LEAD_NODE).map((lead) => lead.outcome)).toEqual(Array(3).fill('created'));
		const campaigns = [...sandbox.store.campaigns.values()];
		expect(campaigns).toHaveLength(1);
		const [campaign] = campaigns;
		expect(campaign).toMatchObject({
			name: 'CRM sync',
			status: 'active',
			lead_list_id: 'll_crm_sync',
			type: 'connection_message',
		});
		expect(campaign.steps[0]).toEqual({
			type: 'connection_request',
			note: expect.stringContaining('{{firstName}}'),
		});
		expect(output(CAMPAIGN_NODE).map((c) => c.outcome)).toEqual(['created']);
		expect(output(START_NODE)).toEqual([{ ...campaign, outcome: 'started' }]);
		const members = [...sandbox.store.leads.values()]
			.filter((l) => l.lead_list_id === 'll_crm_sync')
			.map((l) => `${l.first_name} ${l.last_name}`);
		expect(members.sort()).toEqual(['Ada Lovelace', 'Alan Turing', 'Grace Hopper']);
	});

	test('the second run creates 0 leads and 0 campaigns, starts nothing new, and succeeds', async () => {
		const { sandbox, runtime, options } = world!;
		const before = sandbox.stats().creates;
		const since = sandbox.requests().length;
		const run = await executeWorkflow(runtime, options, workflowId);
		expect(run.data.resultData.error).toBeUndefined();
		const output = outputOf(run);
		expect(output(LEAD_NODE).map((lead) => lead.outcome)).toEqual(Array(3).fill('unchanged'));
		expect(output(CAMPAIGN_NODE).map((c) => c.outcome)).toEqual(['existing']);
		expect(output(START_NODE).map((c) => [c.status, c.outcome])).toEqual([['active', 'unchanged']]);
		expect(sandbox.stats().creates).toEqual(before);
		const writes = sandbox
			.requests()
			.slice(since)
			.filter((r) => r.method !== 'GET' && r.status !== null && r.status < 300);
		expect(writes.map((r) => `${r.method} ${r.path}`)).toEqual([]);
		expect(sandbox.store.campaigns.size).toBe(1);
		expect(sandbox.store.leads.size).toBe(3);
	});

	test('contacts already stored in other spellings (no scheme, uk., m.): 0 leads created, the second run writes nothing', async () => {
		const { sandbox, runtime, options } = world!;
		sandbox.reset({ leads: 0, campaigns: 0, messages: 0 });
		sandbox.config({ profileStorage: 'mobile-host' });
		const example = JSON.parse(fs.readFileSync(path.join(EXAMPLES_DIR, EXAMPLE), 'utf8')) as {
			nodes: Array<{ name: string; parameters: { jsCode?: string } }>;
		};
		// The sample's Code node holds its contacts as one JSON array: `const contacts = [...];`.
		const code = example.nodes.find((node) => node.name === 'CRM contacts (sample)')!.parameters
			.jsCode!;
		const contacts = JSON.parse(/const contacts = (\[[\s\S]*?\]);/.exec(code)![1]) as Array<
			Record<string, string>
		>;
		// As a CSV import, a browser extension and a mobile share stored them.
		const spellings = [
			(url: string) => url.replace(/^https:\/\//, ''),
			(url: string) => url.replace('www.linkedin.com', 'uk.linkedin.com'),
			(url: string) => `${url.replace('www.linkedin.com', 'm.linkedin.com')}/`,
		];
		const stored = contacts.map((contact, i) =>
			sandbox.store.addLead({
				first_name: contact.first_name,
				last_name: contact.last_name,
				linkedin_url: spellings[i % spellings.length](contact.linkedin_url),
			}),
		);
		for (let run = 1; run <= 2; run++) {
			const since = sandbox.requests().length;
			const result = await executeWorkflow(runtime, options, workflowId);
			expect(result.data.resultData.error).toBeUndefined();
			const leads = outputOf(result)(LEAD_NODE);
			// The first run adds the list and the CRM id to each stored lead; the second finds nothing to change.
			expect(leads.map((lead) => lead.outcome)).toEqual(
				Array(contacts.length).fill(run === 1 ? 'updated' : 'unchanged'),
			);
			expect(leads.map((lead) => lead.id)).toEqual(stored.map((lead) => lead.id));
			const writes = sandbox
				.requests()
				.slice(since)
				.filter((r) => r.path === '/api/v1/leads' && r.method === 'POST');
			expect(writes).toHaveLength(0);
			if (run === 2) {
				const changed = sandbox
					.requests()
					.slice(since)
					.filter(
						(r) => r.method === 'PATCH' || (r.method === 'POST' && r.path.endsWith('/leads')),
					);
				expect(changed).toHaveLength(0);
			}
		}
		expect(sandbox.store.leads.size).toBe(contacts.length);
		sandbox.config({ profileStorage: 'as-sent' });
	});
});
