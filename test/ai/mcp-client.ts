/** An MCP client (`@modelcontextprotocol/sdk`) over streamable HTTP, as Claude, Cursor or an agent connects. */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import { MCP_TOKEN } from '../n8n/mcp';

/** Connects with the Bearer token (the playground's, unless another is given). */
export async function connectMcp(url: string, token: string = MCP_TOKEN): Promise<Client> {
	const client = new Client({ name: 'outreach-ai-test', version: '1.0.0' });
	await client.connect(
		new StreamableHTTPClientTransport(new URL(url), {
			requestInit: { headers: { authorization: `Bearer ${token}` } },
		}),
	);
	return client;
}

/** The text of a tool result (n8n answers with one text part: the output items as JSON, or the error). */
export function resultText(result: unknown): string {
	const { content } = result as { content: Array<{ type: string; text?: string }> };
	return content
		.filter((part) => part.type === 'text')
		.map((part) => part.text)
		.join('\n');
}
