/**
 * The Outreach Automation Tool as agents meet it, in a real n8n with the packed package:
 * - an MCP client (`@modelcontextprotocol/sdk` over streamable HTTP) lists the tools of a published MCP Server
 *   Trigger workflow (the example's eleven, and the other four operations) and calls each one: all 15
 *   operations; the sandbox shows each call's effect exactly once;
 * - errors (unknown lead, bad input, a rate limit that cannot be waited out) come back as tool errors in
 *   words a model can act on, without the API key;
 * - n8n's AI Agent, with a scripted OpenAI-compatible model, calls the tool and gets its result.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';

import { RESOURCES } from '../../nodes/OutreachAutomation/resources';
import { N8N_MAJOR } from '../n8n/runtime';
import type { Lead } from '../sandbox/types';
import type { ChatRequest } from './model-server';
import { connectMcp, resultText } from './mcp-client';
import { SEARCH_COMPANY, SEARCH_MATCHES, startAiWorld, stopAiWorld, type AiWorld } from './world';
import { AGENT_PATH, AGENT_TOOL, EXAMPLE_TOOLS, MCP_TOOLS, toolName } from './workflows';

let world: AiWorld;
let mcp: Client;

beforeAll(async () => {
	world = await startAiWorld();
	mcp = await connectMcp(world.mcpUrl);
}, 600_000);

afterAll(async () => {
	await mcp?.close().catch(() => undefined);
	const failures = (globalThis as { __outreachE2eFailures?: number }).__outreachE2eFailures ?? 0;
	if (world) {
		process.stdout.write(
			`[ai] n8n ${world.n8n.url}: setup ${JSON.stringify(world.timings)} (ms)\n`,
		);
	}
	await stopAiWorld(world, failures > 0);
});

function toolDescription(resource: string, operation: string): string {
	return RESOURCES.find((t) => t.value === resource)!.operations.find((o) => o.value === operation)!
		.toolDescription;
}

interface ToolOutcome {
	isError: boolean;
	text: string;
	/** The sandbox's /api/v1 requests made during the call. */
	requests: Array<{ method: string; path: string; status: number | null; query: unknown }>;
}

function mark(): number {
	const log = world.sandbox.requests();
	return log.length ? log[log.length - 1].seq : 0;
}

async function call(nodeName: string, args: Record<string, unknown>): Promise<ToolOutcome> {
	const since = mark();
	const result = await mcp.callTool({ name: toolName(nodeName), arguments: args });
	const text = resultText(result);
	expect(text).not.toContain(world.sandbox.apiKey);
	const requests = world.sandbox
		.requests(since)
		.filter((r) => r.path.startsWith('/api/v1'))
		.map(({ method, path, status, query }) => ({ method, path, status, query }));
	return { isError: result.isError === true, text, requests };
}

/**
 * A tool's error as n8n's MCP Server Trigger gives it to the client: the error's class (2.x; 1.x says
 * "Error"), the node's message, then its description after "Details:".
 */
function toolError(message: string, description?: string): string {
	const kind = N8N_MAJOR >= 2 ? 'NodeOperationError' : 'Error';
	return `${kind}: ${message}${description === undefined ? '' : `\n\nDetails: ${description}`}`;
}

/** The JSON a tool answered with: n8n sends the node's output items as JSON text. */
function items(text: string): Array<Record<string, unknown>> {
	const parsed = JSON.parse(text) as unknown;
	return (Array.isArray(parsed) ? parsed : [parsed]) as Array<Record<string, unknown>>;
}

describe('MCP: the tools as an MCP client sees them', () => {
	it('lists one tool per attached operation, with our description and the $fromAI inputs', async () => {
		const { tools } = await mcp.listTools();
		expect(tools.map((t) => t.name).sort()).toEqual(Object.keys(MCP_TOOLS).map(toolName).sort());
		for (const [nodeName, parameters] of Object.entries(MCP_TOOLS)) {
			const tool = tools.find((t) => t.name === toolName(nodeName))!;
			expect(tool.description).toBe(
				toolDescription(String(parameters.resource), String(parameters.operation)),
			);
			expect(tool.inputSchema.type).toBe('object');
		}
		const create = tools.find((t) => t.name === 'Create_a_lead')!;
		expect(Object.keys(create.inputSchema.properties ?? {}).sort()).toEqual([
			'company',
			'firstName',
			'lastName',
			'linkedinUrl',
		]);
		const send = tools.find((t) => t.name === 'Send_a_message')!;
		expect(Object.keys(send.inputSchema.properties ?? {}).sort()).toEqual(['leadId', 'text']);
		const campaign = tools.find((t) => t.name === 'Create_a_campaign')!;
		expect(Object.keys(campaign.inputSchema.properties ?? {}).sort()).toEqual([
			'leadListId',
			'name',
			'steps',
		]);
	});

	it('the tools cover all 15 operations: the example eleven and the other four', () => {
		const every = RESOURCES.flatMap((r) => r.operations.map((o) => `${r.value} ${o.value}`));
		const attached = Object.values(MCP_TOOLS).map((p) => `${p.resource} ${p.operation}`);
		expect(every).toHaveLength(15);
		expect(attached.sort()).toEqual(every.sort());
		expect(Object.keys(EXAMPLE_TOOLS)).toHaveLength(11);
	});

	it('refuses a client without the Bearer token', async () => {
		await expect(connectMcp(world.mcpUrl, 'wrong-token')).rejects.toThrow();
	});
});

describe('MCP: every tool call has its effect at the sandbox exactly once', () => {
	let leadId: string;
	let messageId: string;

	it('Create a lead: one POST /leads, one new lead', async () => {
		const before = world.sandbox.stats().creates.lead;
		const outcome = await call('Create a lead', {
			firstName: 'Ada',
			lastName: 'Lovelace',
			company: 'Analytical Engines',
			linkedinUrl: 'https://www.linkedin.com/in/ada-mcp',
		});
		expect(outcome.isError).toBe(false);
		expect(outcome.requests.map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual([
			'POST /api/v1/leads 201',
		]);
		expect(world.sandbox.stats().creates.lead).toBe(before + 1);
		const [created] = items(outcome.text);
		leadId = String(created.id);
		const stored = world.sandbox.store.leads.get(leadId)!;
		expect(stored).toMatchObject({
			first_name: 'Ada',
			last_name: 'Lovelace',
			company: 'Analytical Engines',
			linkedin_url: 'https://www.linkedin.com/in/ada-mcp',
		});
	});

	it('Create or update a lead: called twice with the same profile, one lead, written once', async () => {
		const args = {
			firstName: 'Grace',
			lastName: 'Hopper',
			company: 'Navy',
			linkedinUrl: 'https://www.linkedin.com/in/grace-mcp',
		};
		const first = await call('Create or update a lead', args);
		expect(first.isError).toBe(false);
		const writes = (outcome: typeof first) =>
			outcome.requests.filter((r) => r.method !== 'GET').map((r) => `${r.method} ${r.path}`);
		expect(writes(first)).toEqual(['POST /api/v1/leads']);
		const [created] = items(first.text);
		expect(created).toMatchObject({ outcome: 'created', first_name: 'Grace' });

		const second = await call('Create or update a lead', {
			...args,
			linkedinUrl: 'http://linkedin.com/in/Grace-MCP/',
		});
		expect(second.isError).toBe(false);
		expect(writes(second)).toEqual([]);
		expect(items(second.text)[0]).toMatchObject({ outcome: 'unchanged', id: created.id });
		const graces = [...world.sandbox.store.leads.values()].filter(
			(lead) => lead.linkedin_url === args.linkedinUrl,
		);
		expect(graces).toHaveLength(1);
	});

	it('Get a lead: one GET, the lead as JSON', async () => {
		const outcome = await call('Get a lead', { leadId });
		expect(outcome.isError).toBe(false);
		expect(outcome.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
			`GET /api/v1/leads/${leadId}`,
		]);
		expect(items(outcome.text)[0]).toMatchObject({ id: leadId, first_name: 'Ada' });
	});

	it('Update a lead: one PATCH, the new title stored', async () => {
		const outcome = await call('Update a lead', { leadId, title: 'Chief Analyst' });
		expect(outcome.isError).toBe(false);
		expect(outcome.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
			`PATCH /api/v1/leads/${leadId}`,
		]);
		expect(world.sandbox.store.leads.get(leadId)!.title).toBe('Chief Analyst');
		expect(world.sandbox.store.leads.get(leadId)!.first_name).toBe('Ada');
	});

	it(`Get many leads: ${SEARCH_MATCHES} match, the tool's default limit returns 10 in one request`, async () => {
		const outcome = await call('Get many leads', { search: SEARCH_COMPANY });
		expect(outcome.isError).toBe(false);
		expect(outcome.requests).toHaveLength(1);
		// It asks for no more than it returns.
		expect(outcome.requests[0]).toMatchObject({
			method: 'GET',
			path: '/api/v1/leads',
			query: expect.objectContaining({ per_page: '10', search: SEARCH_COMPANY }),
		});
		const leads = items(outcome.text) as unknown as Lead[];
		expect(leads).toHaveLength(10);
		expect(new Set(leads.map((l) => l.company))).toEqual(new Set([SEARCH_COMPANY]));
	});

	it('Send a message: one POST /messages, one message to that lead', async () => {
		const before = world.sandbox.stats().creates.message;
		const outcome = await call('Send a message', { leadId, text: 'Hello Ada, from an agent' });
		expect(outcome.isError).toBe(false);
		expect(outcome.requests.map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual([
			'POST /api/v1/messages 201',
		]);
		expect(world.sandbox.stats().creates.message).toBe(before + 1);
		const sent = world.sandbox.store.findMessages({ lead_id: leadId });
		expect(sent.map((m) => m.body)).toEqual(['Hello Ada, from an agent']);
		messageId = String(items(outcome.text)[0].id);
		expect(messageId).toBe(sent[0].id);
	});

	it('Get a message: one GET, that message as JSON', async () => {
		const outcome = await call('Get a message', { messageId });
		expect(outcome.isError).toBe(false);
		expect(outcome.requests.map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual([
			`GET /api/v1/messages/${messageId} 200`,
		]);
		expect(items(outcome.text)).toEqual([
			expect.objectContaining({
				id: messageId,
				lead_id: leadId,
				body: 'Hello Ada, from an agent',
			}),
		]);
	});

	it('Get many messages: one GET filtered by the lead, its one message', async () => {
		const outcome = await call('Get many messages', { leadId });
		expect(outcome.isError).toBe(false);
		expect(outcome.requests).toHaveLength(1);
		expect(outcome.requests[0]).toMatchObject({
			method: 'GET',
			path: '/api/v1/messages',
			query: expect.objectContaining({ lead_id: leadId }),
		});
		expect(items(outcome.text).map((m) => m.body)).toEqual(['Hello Ada, from an agent']);
	});

	it('Get a campaign, Start, Pause, Get analytics: one request each, the status moved', async () => {
		const { campaignId } = world;
		const got = await call('Get a campaign', { campaignId });
		expect(got.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
			`GET /api/v1/campaigns/${campaignId}`,
		]);
		expect(items(got.text)[0]).toMatchObject({ id: campaignId, status: 'draft' });

		const started = await call('Start a campaign', { campaignId });
		expect(started.isError).toBe(false);
		expect(started.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
			`POST /api/v1/campaigns/${campaignId}/start`,
		]);
		expect(world.sandbox.store.campaigns.get(campaignId)!.status).toBe('active');

		const paused = await call('Pause a campaign', { campaignId });
		expect(paused.isError).toBe(false);
		expect(paused.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
			`POST /api/v1/campaigns/${campaignId}/pause`,
		]);
		expect(world.sandbox.store.campaigns.get(campaignId)!.status).toBe('paused');

		const analytics = await call('Get analytics of a campaign', { campaignId });
		expect(analytics.isError).toBe(false);
		expect(analytics.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
			`GET /api/v1/campaigns/${campaignId}/analytics`,
		]);
		expect(items(analytics.text)[0]).toMatchObject({ campaign_id: campaignId });
	});

	it('Create a campaign: the steps the model filled, in its order, one read of the names, one POST, one draft', async () => {
		const before = world.sandbox.stats().creates.campaign;
		const steps = [
			{ type: 'connection_request', note: 'Hi {{firstName}}, glad to connect' },
			{ type: 'message', delay_days: 2, body: 'Thanks for connecting!' },
			{ type: 'message', delay_days: 5, body: 'Shall we talk next week?' },
		];
		const outcome = await call('Create a campaign', {
			name: 'Agent-made campaign',
			leadListId: 'list_agents',
			steps: JSON.stringify(steps),
		});
		expect(outcome.isError).toBe(false);
		// "If a Campaign Has This Name" is Use Existing by default: the names are read first.
		expect(outcome.requests.map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual([
			'GET /api/v1/campaigns 200',
			'POST /api/v1/campaigns 201',
		]);
		expect(world.sandbox.stats().creates.campaign).toBe(before + 1);
		const [created] = items(outcome.text);
		expect(world.sandbox.store.campaigns.get(String(created.id))).toMatchObject({
			name: 'Agent-made campaign',
			type: 'connection_message',
			lead_list_id: 'list_agents',
			status: 'draft',
			steps,
		});
	});

	it('Create a campaign with steps that are not a JSON array: refused before any request', async () => {
		const outcome = await call('Create a campaign', {
			name: 'Broken steps',
			leadListId: 'list_agents',
			steps: '{"type": "message"',
		});
		expect(outcome.isError).toBe(true);
		// The node's message, then JSON.parse's own words.
		expect(outcome.text.startsWith(toolError('Steps (JSON) is not valid JSON: '))).toBe(true);
		expect(outcome.text).toMatch(
			/: Expected ',' or '}' after property value in JSON at position 18/,
		);
		expect(outcome.requests).toEqual([]);
	});

	it('Get many campaigns: the Limit the model chose, in one request', async () => {
		const outcome = await call('Get many campaigns', { limit: 2 });
		expect(outcome.isError).toBe(false);
		expect(outcome.requests).toHaveLength(1);
		expect(outcome.requests[0]).toMatchObject({
			method: 'GET',
			path: '/api/v1/campaigns',
			status: 200,
			query: expect.objectContaining({ per_page: '2' }),
		});
		const campaigns = items(outcome.text);
		expect(world.sandbox.store.campaigns.size).toBeGreaterThan(2);
		expect(campaigns).toHaveLength(2);
		for (const c of campaigns)
			expect(world.sandbox.store.campaigns.get(String(c.id))).toMatchObject({ name: c.name });
	});

	it('Delete a lead: one DELETE, the lead gone from the account', async () => {
		expect(world.sandbox.store.leads.has(leadId)).toBe(true);
		const leads = world.sandbox.store.leads.size;
		const outcome = await call('Delete a lead', { leadId });
		expect(outcome.isError).toBe(false);
		expect(outcome.requests.map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual([
			`DELETE /api/v1/leads/${leadId} 200`,
		]);
		expect(items(outcome.text)[0]).toMatchObject({ id: leadId, deleted: true });
		expect(world.sandbox.store.leads.has(leadId)).toBe(false);
		expect(world.sandbox.store.leads.size).toBe(leads - 1);
	});
});

describe('MCP: errors come back as tool errors a model can act on', () => {
	it('an unknown lead: the ID and "not found", one request', async () => {
		const outcome = await call('Get a lead', { leadId: 'ld_doesnotexist' });
		expect(outcome.isError).toBe(true);
		expect(outcome.text).toBe(
			toolError(
				'Lead "ld_doesnotexist" was not found',
				'Lead ld_doesnotexist not found. Check the ID, or pick it from the list.',
			),
		);
		expect(outcome.requests.map((r) => r.status)).toEqual([404]);
	});

	it('a bad LinkedIn URL: refused before any request, saying how to fix it', async () => {
		const outcome = await call('Create a lead', {
			firstName: 'Bad',
			lastName: 'Url',
			company: 'Nowhere',
			linkedinUrl: 'linkedin ada',
		});
		expect(outcome.isError).toBe(true);
		expect(outcome.text).toBe(
			toolError(
				'LinkedIn Profile URL "linkedin ada" is not a web address',
				'Use the address of the profile, e.g. https://www.linkedin.com/in/ada-lovelace',
			),
		);
		expect(outcome.requests).toEqual([]);
	});

	it('starting an active campaign: the conflict in words, one request', async () => {
		const { campaignId } = world;
		await call('Start a campaign', { campaignId });
		const again = await call('Start a campaign', { campaignId });
		expect(again.isError).toBe(true);
		expect(again.text).toBe(
			toolError(`Campaign ${campaignId} is already active`, 'Nothing was changed.'),
		);
		expect(again.requests.map((r) => r.status)).toEqual([409]);
	});
});

describe('the AI Agent node calls the tool through its own loop', () => {
	it('the model gets the tool schema and description, then the tool result', async () => {
		const lead = world.sandbox.store.addLead({
			first_name: 'Grace',
			last_name: 'Hopper',
			company: 'Compilers Inc',
		});
		const name = toolName(AGENT_TOOL);
		world.model.script([
			() => ({ toolCall: { name, arguments: { leadId: lead.id } } }),
			(request) => {
				const toolMessage = request.messages.find((m) => m.role === 'tool');
				return { content: `Found: ${String(toolMessage?.content).slice(0, 2000)}` };
			},
		]);
		const since = mark();
		const asked = world.model.requests.length;
		const answer = await world.n8n.callWebhook<Array<{ output?: string }>>(AGENT_PATH, {
			prompt: `Who is lead ${lead.id}?`,
		});
		expect(answer.status).toBe(200);
		// n8n's agent loop: one request with the tools, one with the tool's result.
		expect(world.model.requests).toHaveLength(asked + 2);
		const [first, second] = world.model.requests.slice(asked) as ChatRequest[];
		const offered = first.tools?.find((t) => t.function.name === name);
		expect(offered?.function.description).toBe(toolDescription('lead', 'get'));
		expect(offered?.function.parameters).toMatchObject({
			type: 'object',
			properties: { leadId: expect.objectContaining({ type: 'string' }) },
			required: ['leadId'],
		});
		expect(JSON.stringify(first.messages)).toContain(`Who is lead ${lead.id}?`);
		const toolMessage = second.messages.find((m) => m.role === 'tool')!;
		expect(String(toolMessage.content)).toContain(lead.id);
		expect(String(toolMessage.content)).toContain('Grace');
		expect(String(toolMessage.content)).not.toContain(world.sandbox.apiKey);
		expect(
			world.sandbox
				.requests(since)
				.filter((r) => r.path.startsWith('/api/v1'))
				.map((r) => `${r.method} ${r.path}`),
		).toEqual([`GET /api/v1/leads/${lead.id}`]);
		const output = (Array.isArray(answer.body) ? answer.body[0] : answer.body) as {
			output?: string;
		};
		expect(output.output).toContain('Found:');
		expect(output.output).toContain('Grace');
	});
});

describe('MCP: a rate limit that cannot be waited out (last: it leaves the key limited)', () => {
	it('fails at once with the reset time and what to do, without the key', async () => {
		// One request per 10 minutes: the node may wait up to 5 minutes, so it must give up and say when.
		world.sandbox.config({ rateLimit: 1, windowMs: 600_000 });
		const leadId = [...world.sandbox.store.leads.keys()][0];
		const outcomes: ToolOutcome[] = [];
		for (let i = 0; i < 3 && !outcomes.some((o) => o.isError); i++)
			outcomes.push(await call('Get a lead', { leadId }));
		const failed = outcomes.find((o) => o.isError)!;
		expect(failed).toBeDefined();
		expect(failed.text).toMatch(/Rate limit of the Outreach Automation API reached \(HTTP 429\)/);
		expect(failed.text).toMatch(/resets at .* \(in \d+ s\)/);
		expect(failed.text).toMatch(/Run the workflow again after the reset/);
		const sent = outcomes.flatMap((o) => o.requests);
		expect(sent.length).toBeLessThanOrEqual(2);
	});
});
