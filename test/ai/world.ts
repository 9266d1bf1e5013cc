/**
 * The world of the AI suite: the sandbox and the scripted model server (in this process), a fresh n8n user
 * folder with the packed package, the credentials (Outreach Automation -> sandbox, the MCP trigger's Bearer
 * token, OpenAI -> the scripted server), the MCP and agent workflows published, one `n8n start` for all.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { startSandbox, type Sandbox } from '../sandbox/server';
import {
	freePort,
	importCredentials,
	importWorkflows,
	N8nServer,
	packAndInstall,
	provision,
	reportOrClean,
	type N8nOptions,
} from '../n8n/runtime';
import { startModelServer, type ModelServer } from './model-server';
import { MCP_WORKFLOW_ID, mcpCredential, mcpUrl } from '../n8n/mcp';
import { AGENT_WORKFLOW_ID, agentWorkflow, mcpWorkflow, openAiCredential } from './workflows';

export const CREDENTIAL = {
	id: 'OutreachAccount1',
	name: 'Outreach Automation account',
} as const;

const OWNER = {
	email: 'ai-owner@example.com',
	password: `Ai-${randomBytes(9).toString('base64url')}1`,
	firstName: 'AI',
	lastName: 'Owner',
};

/** Leads whose company the Get Many tool searches for: more than the tool's default limit. */
export const SEARCH_COMPANY = 'Toolsearch Ltd';
export const SEARCH_MATCHES = 15;

export interface AiWorld {
	sandbox: Sandbox;
	model: ModelServer;
	n8n: N8nServer;
	userFolder: string;
	mcpUrl: string;
	/** A draft campaign the start and pause tools work on. */
	campaignId: string;
	timings: Record<string, number>;
}

export async function startAiWorld(): Promise<AiWorld> {
	const timings: Record<string, number> = {};
	const time = async <T>(name: string, step: () => Promise<T>): Promise<T> => {
		const started = Date.now();
		try {
			return await step();
		} finally {
			timings[name] = Date.now() - started;
		}
	};
	const started = Date.now();
	const userFolder = fs.mkdtempSync(path.join(os.tmpdir(), 'outreach-ai-'));
	(globalThis as { __outreachE2eUserFolder?: string }).__outreachE2eUserFolder = userFolder;
	let sandbox: Sandbox | undefined;
	let model: ModelServer | undefined;
	let n8n: N8nServer | undefined;
	try {
		const runtime = await time('provision', () => provision());
		sandbox = await startSandbox({
			seed: { leads: 40, campaigns: 2, messages: 60, seed: 11 },
			// High limits: only the rate-limit case lowers them.
			rateLimit: 100_000,
			windowMs: 2_000,
			apiKeys: [`ai-${randomBytes(12).toString('hex')}`],
		});
		for (let i = 0; i < SEARCH_MATCHES; i++)
			sandbox.store.addLead({
				first_name: `Tool${i}`,
				last_name: 'Search',
				company: SEARCH_COMPANY,
			});
		const campaignId = sandbox.store.addCampaign({
			name: 'AI agent campaign',
			type: 'connection_message',
			steps: [{ type: 'connection_request', note: 'Hi {{firstName}}' }],
		}).id;
		model = await startModelServer();

		const options: N8nOptions = {
			userFolder,
			port: await freePort(),
			brokerPort: await freePort(),
		};
		await time('packAndInstall', () => packAndInstall(userFolder));
		await time('importCredentials', () =>
			importCredentials(runtime, options, [
				{
					...CREDENTIAL,
					type: 'outreachAutomationApi',
					data: { baseUrl: sandbox!.url, apiKey: sandbox!.apiKey },
				},
				mcpCredential(),
				openAiCredential(model!.baseUrl),
			]),
		);
		await time('importWorkflows', () =>
			importWorkflows(runtime, options, [mcpWorkflow(), agentWorkflow(CREDENTIAL, model!.baseUrl)]),
		);
		n8n = new N8nServer(runtime, options);
		await time('n8nStart', () => n8n!.start());
		await n8n.ensureOwner(OWNER);
		const apiKey = await n8n.createApiKey('ai');
		await time('publish', () => n8n!.publish(apiKey, [MCP_WORKFLOW_ID, AGENT_WORKFLOW_ID]));
		timings.setupTotal = Date.now() - started;
		return {
			sandbox,
			model,
			n8n,
			userFolder,
			mcpUrl: mcpUrl(n8n.url),
			campaignId,
			timings,
		};
	} catch (error) {
		await n8n?.stop();
		await model?.stop();
		await sandbox?.stop();
		process.stderr.write(
			`\n[ai] setup failed; n8n user folder kept for inspection: ${userFolder}\n`,
		);
		throw error;
	}
}

export async function stopAiWorld(world: AiWorld | undefined, failed: boolean): Promise<void> {
	if (!world) return;
	await world.n8n.stop();
	await world.model.stop();
	await world.sandbox.stop();
	reportOrClean('ai', world.n8n, world.userFolder, failed);
}
