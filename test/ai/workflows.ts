/**
 * The workflows of the AI suite: the example "Outreach Automation over MCP" (n8n's MCP Server Trigger with the
 * Outreach Automation Tool attached once per operation an agent would use, parameters filled by the model
 * through `$fromAI`; see test/n8n/mcp.ts), and n8n's AI Agent with an OpenAI chat model (pointed at the
 * test's scripted server) and one of the same tools.
 */
import { randomUUID } from 'node:crypto';

import { MCP_TRIGGER, readMcpExample, type McpExample } from '../n8n/mcp';
import { CREDENTIAL_TYPE, NODE_TYPES } from '../n8n/runtime';
import {
	webhookNode,
	type CredentialRef,
	type NodeJson,
	type Parameters,
} from '../n8n/workflow-json';

export const AGENT_WORKFLOW_ID = 'aiAgentOutreach1';
export const AGENT_PATH = 'ai-agent';
export const OPENAI_CREDENTIAL = { id: 'ScriptedOpenAi01', name: 'Scripted OpenAI (test)' };

/**
 * Tool node name (n8n derives the tool's name from it) -> parameters, as the example workflow attaches them
 * to its MCP Server Trigger. "Get many leads" leaves Limit at the tool's default on purpose: the suite checks
 * what that default returns.
 */
export const EXAMPLE_TOOLS: Record<string, Parameters> = Object.fromEntries(
	readMcpExample()
		.nodes.filter((node) => node.type === NODE_TYPES.tool)
		.map((node) => [node.name, node.parameters]),
);

const fromAi = (key: string, description: string, type = 'string') =>
	`={{ $fromAI('${key}', '${description.replace(/'/g, "\\'")}', '${type}') }}`;
const byId = (key: string, description: string) => ({
	__rl: true,
	mode: 'id',
	value: fromAi(key, description),
});

/**
 * The operations the example leaves out, attached to the same trigger in the suite (as a user would add
 * them), so that every operation is called as a tool. Create a campaign takes its steps from the model as
 * a JSON array (Steps Input: JSON), the way a model can fill any number of steps.
 */
export const MORE_TOOLS: Record<string, Parameters> = {
	'Create a campaign': {
		resource: 'campaign',
		operation: 'create',
		name: fromAi('name', 'The name of the campaign'),
		leadListId: fromAi('leadListId', 'The lead list the campaign targets, e.g. list_founders'),
		stepsMode: 'json',
		stepsJson: fromAi(
			'steps',
			'The steps in order, as a JSON array of objects, each with a type: connection_request (with a note) or message (with delay_days and body)',
		),
	},
	'Get many campaigns': {
		resource: 'campaign',
		operation: 'getAll',
		limit: fromAi('limit', 'How many campaigns to return at most', 'number'),
	},
	'Get a message': {
		resource: 'message',
		operation: 'get',
		messageId: fromAi('messageId', 'The ID of the message, e.g. msg_0000001a'),
	},
	'Delete a lead': {
		resource: 'lead',
		operation: 'delete',
		leadId: byId('leadId', 'The ID of the lead to delete, e.g. ld_0000001a'),
	},
};

/** Every tool of the suite's MCP workflow: the example's and the others. */
export const MCP_TOOLS: Record<string, Parameters> = { ...EXAMPLE_TOOLS, ...MORE_TOOLS };

/** The example workflow with MORE_TOOLS attached to its trigger too: what the suite publishes. */
export function mcpWorkflow(): McpExample {
	const example = readMcpExample();
	const template = example.nodes.find((node) => node.type === NODE_TYPES.tool)!;
	const added = Object.entries(MORE_TOOLS).map(
		([name, parameters], i): NodeJson => ({
			...template,
			id: randomUUID(),
			name,
			parameters,
			position: [template.position[0] + 240 * i, template.position[1] + 480],
		}),
	);
	const connections = { ...example.connections };
	for (const name of Object.keys(MORE_TOOLS))
		connections[name] = { ai_tool: [[{ node: MCP_TRIGGER, type: 'ai_tool', index: 0 }]] };
	return { ...example, nodes: [...example.nodes, ...added], connections };
}

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
	const webhook = webhookNode(AGENT_PATH);
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
