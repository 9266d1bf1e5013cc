/**
 * The workflows of the AI suite: n8n's MCP Server Trigger with the Outreach Automation Tool attached once
 * per operation an agent would use (parameters filled by the model through `$fromAI`), and n8n's AI Agent
 * with an OpenAI chat model (pointed at the test's scripted server) and one of the same tools.
 *
 * The MCP workflow is also the playground's and the users' example (examples/), built by `mcpWorkflow()`.
 */
import { randomUUID } from 'node:crypto';

import { CREDENTIAL_TYPE, NODE_TYPES } from '../n8n/runtime';
import type { CredentialRef, NodeJson, Parameters } from '../n8n/workflow-json';

export const MCP_PATH = 'outreach-automation';
export const MCP_TOKEN = 'playground-mcp-token';
export const MCP_WORKFLOW_ID = 'OutreachExMcp0001';
export const MCP_WORKFLOW_NAME = 'Outreach Automation over MCP';
export const MCP_CREDENTIAL = { id: 'OutreachMcpToken1', name: 'Outreach MCP token (playground)' };
export const MCP_TRIGGER = 'MCP Server Trigger';

export const AGENT_WORKFLOW_ID = 'aiAgentOutreach1';
export const AGENT_PATH = 'ai-agent';
export const OPENAI_CREDENTIAL = { id: 'ScriptedOpenAi01', name: 'Scripted OpenAI (test)' };

/** A `$fromAI` placeholder: the model fills it; its key, description and type make the tool's schema. */
export const fromAI = (key: string, description: string, type = 'string') =>
	`={{ $fromAI('${key}', '${description.replace(/'/g, "\\'")}', '${type}') }}`;
const idFromAI = (key: string, description: string) => ({
	__rl: true,
	mode: 'id',
	value: fromAI(key, description),
});

const LEAD_ID = idFromAI('leadId', 'The ID of the lead, e.g. ld_0000001a');
const CAMPAIGN_ID = idFromAI('campaignId', 'The ID of the campaign, e.g. cmp_0000001a');

/** Tool node name (n8n derives the tool's name from it: spaces become underscores) -> parameters. */
export const MCP_TOOLS: Record<string, Parameters> = {
	'Create a lead': {
		resource: 'lead',
		operation: 'create',
		firstName: fromAI('firstName', "The lead's first name"),
		lastName: fromAI('lastName', "The lead's last name"),
		company: fromAI('company', 'The company the lead works for'),
		linkedinUrl: fromAI('linkedinUrl', "The lead's LinkedIn profile URL, starting with https://"),
		additionalFields: {},
	},
	'Get a lead': { resource: 'lead', operation: 'get', leadId: LEAD_ID },
	'Get many leads': {
		resource: 'lead',
		operation: 'getAll',
		// Limit is left at the tool's default on purpose: the suite checks what that default returns.
		filters: { search: fromAI('search', 'Text to look for in name, company and title') },
	},
	'Update a lead': {
		resource: 'lead',
		operation: 'update',
		leadId: LEAD_ID,
		updateFields: { title: fromAI('title', "The lead's new job title") },
	},
	'Send a message': {
		resource: 'message',
		operation: 'send',
		leadId: LEAD_ID,
		body: fromAI('text', 'The text of the message'),
	},
	'Get many messages': {
		resource: 'message',
		operation: 'getAll',
		filters: { leadId: LEAD_ID },
	},
	'Get a campaign': { resource: 'campaign', operation: 'get', campaignId: CAMPAIGN_ID },
	'Start a campaign': { resource: 'campaign', operation: 'start', campaignId: CAMPAIGN_ID },
	'Pause a campaign': { resource: 'campaign', operation: 'pause', campaignId: CAMPAIGN_ID },
	'Get analytics of a campaign': {
		resource: 'campaign',
		operation: 'getAnalytics',
		campaignId: CAMPAIGN_ID,
	},
};

/** n8n's tool name for a node name (nodeNameToToolName: anything but letters, digits, _ and - becomes _). */
export const toolName = (nodeName: string) => nodeName.replace(/[^a-zA-Z0-9_-]/g, '_');

type Connections = Record<
	string,
	Record<string, Array<Array<{ node: string; type: string; index: number }>>>
>;

export interface AiWorkflowJson {
	id: string;
	name: string;
	active: boolean;
	nodes: NodeJson[];
	connections: Connections;
	settings: Record<string, unknown>;
	pinData: Record<string, unknown>;
}

function toolNode(
	credential: CredentialRef,
	name: string,
	parameters: Parameters,
	position: [number, number],
): NodeJson {
	return {
		id: randomUUID(),
		name,
		type: NODE_TYPES.tool,
		typeVersion: 1,
		position,
		parameters,
		credentials: { [CREDENTIAL_TYPE]: { id: credential.id, name: credential.name } },
	};
}

/** MCP Server Trigger (Bearer auth) <- one Outreach Automation Tool per operation of MCP_TOOLS. */
export function mcpWorkflow(credential: CredentialRef): AiWorkflowJson {
	const trigger: NodeJson = {
		id: randomUUID(),
		name: MCP_TRIGGER,
		type: '@n8n/n8n-nodes-langchain.mcpTrigger',
		typeVersion: 2,
		position: [400, 0],
		webhookId: randomUUID(),
		parameters: { authentication: 'bearerAuth', path: MCP_PATH },
		credentials: { httpBearerAuth: { id: MCP_CREDENTIAL.id, name: MCP_CREDENTIAL.name } },
	};
	const tools = Object.entries(MCP_TOOLS).map(([name, parameters], index) =>
		toolNode(credential, name, parameters, [index * 160, 240]),
	);
	const connections: Connections = {};
	for (const tool of tools)
		connections[tool.name] = { ai_tool: [[{ node: MCP_TRIGGER, type: 'ai_tool', index: 0 }]] };
	return {
		id: MCP_WORKFLOW_ID,
		name: MCP_WORKFLOW_NAME,
		active: false,
		nodes: [trigger, ...tools],
		connections,
		settings: { executionOrder: 'v1' },
		pinData: {},
	};
}

/** The Bearer token credential of the MCP Server Trigger, for `n8n import:credentials`. */
export function mcpCredential(token = MCP_TOKEN) {
	return { ...MCP_CREDENTIAL, type: 'httpBearerAuth', data: { token } };
}

/** The OpenAI credential whose base URL is the scripted model server. */
export function openAiCredential(baseUrl: string) {
	return {
		...OPENAI_CREDENTIAL,
		type: 'openAiApi',
		data: { apiKey: 'sk-scripted-test', url: baseUrl },
	};
}

export const AGENT_TOOL = 'Get a lead';

/** Webhook (prompt in body.prompt) -> AI Agent, with an OpenAI chat model and the Get a lead tool. */
export function agentWorkflow(credential: CredentialRef, modelBaseUrl: string): AiWorkflowJson {
	const webhook: NodeJson = {
		id: randomUUID(),
		name: 'Webhook',
		type: 'n8n-nodes-base.webhook',
		typeVersion: 2,
		position: [0, 0],
		webhookId: randomUUID(),
		parameters: {
			httpMethod: 'POST',
			path: AGENT_PATH,
			responseMode: 'lastNode',
			responseData: 'allEntries',
			options: {},
		},
	};
	const agent: NodeJson = {
		id: randomUUID(),
		name: 'AI Agent',
		type: '@n8n/n8n-nodes-langchain.agent',
		typeVersion: 2.2,
		position: [240, 0],
		parameters: {
			promptType: 'define',
			text: '={{ $json.body.prompt }}',
			options: { systemMessage: 'You manage leads in Outreach Automation.' },
		},
	};
	const model: NodeJson = {
		id: randomUUID(),
		name: 'OpenAI Chat Model',
		type: '@n8n/n8n-nodes-langchain.lmChatOpenAi',
		typeVersion: 1.2,
		position: [160, 240],
		parameters: {
			model: { __rl: true, mode: 'id', value: 'scripted-model' },
			options: { baseURL: modelBaseUrl, maxRetries: 0 },
		},
		credentials: { openAiApi: { id: OPENAI_CREDENTIAL.id, name: OPENAI_CREDENTIAL.name } },
	};
	const tool = toolNode(credential, AGENT_TOOL, MCP_TOOLS[AGENT_TOOL], [400, 240]);
	return {
		id: AGENT_WORKFLOW_ID,
		name: 'ai: agent with the Outreach Automation Tool',
		active: false,
		nodes: [webhook, agent, model, tool],
		connections: {
			Webhook: { main: [[{ node: 'AI Agent', type: 'main', index: 0 }]] },
			'OpenAI Chat Model': {
				ai_languageModel: [[{ node: 'AI Agent', type: 'ai_languageModel', index: 0 }]],
			},
			[AGENT_TOOL]: { ai_tool: [[{ node: 'AI Agent', type: 'ai_tool', index: 0 }]] },
		},
		settings: { executionOrder: 'v1' },
		pinData: {},
	};
}
