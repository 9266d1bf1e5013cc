/**
 * The README's playground command, as a newcomer runs it: `npm run dev` must bring up n8n with the nodes, the
 * sandbox credential and the example workflows, signed in with the login the README prints, and stop cleanly.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import {
	CREDENTIAL_TYPE,
	freePort,
	N8nServer,
	NODE_TYPES,
	PROJECT_ROOT,
	provision,
} from '../n8n/runtime';
import { MCP_TOKEN, mcpUrl } from '../n8n/mcp';
import { connectMcp, resultText } from '../ai/mcp-client';

// What the README and the playground's banner promise.
const LOGIN = {
	email: 'owner@example.com',
	password: 'Outreach-Playground-1',
	firstName: 'Playground',
	lastName: 'Owner',
};
const SANDBOX_KEY = 'sandbox-demo-key';

let dev: ChildProcess | undefined;
let output = '';
let userFolder: string;

/** The process groups the e2e environment kills on Ctrl+C and at teardown (see environment.js). */
const groups: Set<number> = ((
	globalThis as { __outreachChildGroups?: Set<number> }
).__outreachChildGroups ??= new Set());
const signalGroup = (child: ChildProcess, signal: NodeJS.Signals) => {
	try {
		process.kill(-child.pid!, signal);
	} catch {
		// already gone
	}
};
const answers = (url: string) =>
	fetch(url, { signal: AbortSignal.timeout(2_000) }).then(
		() => true,
		() => false,
	);

afterAll(async () => {
	if (dev) signalGroup(dev, 'SIGKILL');
	if (userFolder) fs.rmSync(userFolder, { recursive: true, force: true });
}, 60_000);

test(
	'npm run dev serves n8n with the nodes, the sandbox credential and the examples, then stops on SIGTERM',
	async () => {
		// Provision first (its own timeout), so the wait for the banner below only covers the playground's start.
		await provision();
		userFolder = fs.mkdtempSync(path.join(os.tmpdir(), 'outreach-playground-'));
		const [port, sandboxPort, brokerPort] = [await freePort(), await freePort(), await freePort()];
		dev = spawn(
			'npm',
			[
				'run',
				'dev',
				'--',
				'--port',
				String(port),
				'--sandbox-port',
				String(sandboxPort),
				'--broker-port',
				String(brokerPort),
				'--user-folder',
				userFolder,
			],
			{
				cwd: PROJECT_ROOT,
				env: { ...process.env, NODE_ENV: 'development' },
				detached: true,
				stdio: ['ignore', 'pipe', 'pipe'],
			},
		);
		groups.add(dev.pid!);
		dev.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
		dev.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
		const exited = new Promise<number | null>((resolve) =>
			dev!.once('exit', (code) => resolve(code)),
		);

		// Bounded wait for the banner. Whichever way it ends, the watch loop and the timer stop too: a
		// loop left polling after a failed start kept jest (and so CI) from ever exiting.
		let giveUp: NodeJS.Timeout | undefined;
		let settled = false;
		const ready = await Promise.race([
			(async () => {
				while (!settled && !output.includes('playground is running'))
					await new Promise((r) => setTimeout(r, 250));
				return !settled;
			})(),
			exited.then(() => false),
			new Promise<false>((resolve) => {
				giveUp = setTimeout(() => resolve(false), 240_000);
			}),
		]);
		settled = true;
		clearTimeout(giveUp);
		if (!ready) throw new Error(`npm run dev did not come up:\n${output.slice(-4000)}`);
		expect(output).toContain(`http://127.0.0.1:${port}`);
		expect(output).toContain(`${LOGIN.email} / ${LOGIN.password}`);

		// The sandbox answers with the demo key the banner prints.
		const leads = await fetch(`http://127.0.0.1:${sandboxPort}/api/v1/leads?per_page=1`, {
			headers: { authorization: `Bearer ${SANDBOX_KEY}` },
		});
		expect(leads.status).toBe(200);

		// Signed in as the README says, n8n shows the nodes, the credential and the examples.
		const runtime = await provision({ quiet: true });
		const editor = new N8nServer(runtime, { userFolder, port, brokerPort });
		expect(await editor.ensureOwner(LOGIN)).toBe(false); // the playground created the account already
		const nodeTypes = await editor.session<Array<{ name: string }>>('GET', '/types/nodes.json');
		expect(nodeTypes.map((n) => n.name)).toEqual(
			expect.arrayContaining([NODE_TYPES.action, NODE_TYPES.trigger]),
		);
		const credentials = await editor.rest<Array<{ name: string; type: string }>>(
			'GET',
			'/credentials',
		);
		expect(credentials).toEqual(
			expect.arrayContaining([
				expect.objectContaining({ type: CREDENTIAL_TYPE, name: 'Outreach Automation account' }),
			]),
		);
		const workflows = await editor.rest<Array<{ name: string }>>('GET', '/workflows');
		const examples = fs
			.readdirSync(path.join(PROJECT_ROOT, 'examples'))
			.filter((f) => f.endsWith('.json'));
		const names = examples.map(
			(f) =>
				JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'examples', f), 'utf8')).name as string,
		);
		expect(workflows.map((w) => w.name)).toEqual(expect.arrayContaining(names));

		// The MCP URL and token the banner prints serve the tools: an MCP client lists them and creates a lead.
		const mcp = mcpUrl(`http://127.0.0.1:${port}`);
		expect(output).toContain(mcp);
		expect(output).toContain(`Bearer ${MCP_TOKEN}`);
		let client: Awaited<ReturnType<typeof connectMcp>> | undefined;
		for (let attempt = 0; !client; attempt++) {
			// n8n 2.x brings published triggers up in the background, just after it reports ready.
			client = await connectMcp(mcp).catch((error: Error) => {
				if (attempt >= 60) throw error;
				return undefined;
			});
			if (!client) await new Promise((r) => setTimeout(r, 500));
		}
		try {
			const { tools } = await client.listTools();
			expect(tools.map((t) => t.name)).toEqual(
				expect.arrayContaining(['Create_a_lead', 'Get_many_leads', 'Send_a_message']),
			);
			const marker = `Mcp${Date.now()}`;
			const created = await client.callTool({
				name: 'Create_a_lead',
				arguments: {
					firstName: 'Playground',
					lastName: marker,
					company: 'MCP Client Ltd',
					linkedinUrl: `https://www.linkedin.com/in/${marker.toLowerCase()}`,
				},
			});
			expect(created.isError).toBeFalsy();
			expect(resultText(created)).toContain(marker);
			const found = await fetch(`http://127.0.0.1:${sandboxPort}/api/v1/leads?search=${marker}`, {
				headers: { authorization: `Bearer ${SANDBOX_KEY}` },
			}).then((r) => r.json() as Promise<{ data: Array<{ last_name: string }> }>);
			expect(found.data.map((l) => l.last_name)).toEqual([marker]);
		} finally {
			await client.close().catch(() => undefined);
		}

		// SIGTERM (what Ctrl+C or a closing terminal sends) stops n8n and the sandbox: both ports stop answering.
		signalGroup(dev, 'SIGTERM');
		const deadline = Date.now() + 60_000;
		while (
			Date.now() < deadline &&
			((await answers(`http://127.0.0.1:${port}/healthz`)) ||
				(await answers(`http://127.0.0.1:${sandboxPort}/__sandbox/health`)))
		) {
			await new Promise((r) => setTimeout(r, 250));
		}
		expect(await answers(`http://127.0.0.1:${port}/healthz`)).toBe(false);
		expect(await answers(`http://127.0.0.1:${sandboxPort}/__sandbox/health`)).toBe(false);
		groups.delete(dev.pid!);
		dev = undefined;
	},
	30 * 60_000,
);
