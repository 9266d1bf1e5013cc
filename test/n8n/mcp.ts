/**
 * The example workflow "Outreach Automation over MCP" (examples/outreach-automation-over-mcp.json): n8n's MCP
 * Server Trigger, Bearer auth, with the Outreach Automation Tool attached once per operation an agent would
 * use. The playground (`npm run dev`) imports and publishes it; the AI suite (`npm run test:ai`) runs it.
 */
import fs from 'node:fs';
import path from 'node:path';

import { n8nCli, N8N_MAJOR, PROJECT_ROOT, type N8nOptions, type Runtime } from './runtime';
import type { NodeJson } from './workflow-json';

export const MCP_EXAMPLE_FILE = path.join(
	PROJECT_ROOT,
	'examples',
	'outreach-automation-over-mcp.json',
);
/** The MCP Server Trigger's path: its production URL is http://<host>:<port>/mcp/<path>. */
export const MCP_PATH = 'outreach-automation';
/** The playground's Bearer token (local only, like the sandbox's demo key). */
export const MCP_TOKEN = 'playground-mcp-token';
export const MCP_WORKFLOW_ID = 'OutreachExMcp0001';
export const MCP_TRIGGER = 'MCP Server Trigger';
/** The Bearer credential the example's trigger names (n8n's "Bearer Auth" credential type). */
export const MCP_CREDENTIAL = { id: 'OutreachMcpToken1', name: 'MCP Bearer token' };

export interface McpExample {
	id: string;
	name: string;
	nodes: NodeJson[];
	connections: Record<string, unknown>;
	[key: string]: unknown;
}

export function readMcpExample(): McpExample {
	return JSON.parse(fs.readFileSync(MCP_EXAMPLE_FILE, 'utf8')) as McpExample;
}

/** The credential for `n8n import:credentials`. */
export function mcpCredential(token = MCP_TOKEN) {
	return { ...MCP_CREDENTIAL, type: 'httpBearerAuth', data: { token } };
}

/** The production MCP URL of the example on an n8n at `baseUrl`. */
export const mcpUrl = (baseUrl: string) => `${baseUrl}/mcp/${MCP_PATH}`;

/**
 * Publishes (activates) a workflow with n8n's CLI, before `n8n start` (2.x `publish:workflow`, 1.x
 * `update:workflow --active=true`): no API key needed, and `n8n start` brings its triggers up.
 */
export async function publishWithCli(
	runtime: Runtime,
	options: N8nOptions,
	workflowId: string,
): Promise<void> {
	const args =
		N8N_MAJOR >= 2
			? ['publish:workflow', `--id=${workflowId}`]
			: ['update:workflow', `--id=${workflowId}`, '--active=true'];
	await n8nCli(runtime, options, args);
}
