/**
 * `npm run dev`: the playground. A local n8n (the pinned default, or OUTREACH_N8N_VERSION) with this package
 * installed from its packed tarball,
 * already connected to the sandbox API (demo data), an owner account and the example workflows.
 * Ctrl+C stops everything.
 *
 *   npm run dev                                   editor on 5678, sandbox on 4010
 *   npm run dev -- --port 5680 --sandbox-port 4011
 *   N8N_PORT=5680 SANDBOX_PORT=4011 npm run dev
 *   npm run dev -- --fresh                        start from an empty n8n (forget workflows, executions)
 *   OUTREACH_N8N_VERSION=<v> npm run dev          the playground on another n8n of versions.json (1.x)
 *
 * The n8n user folder lives in the cache (<cache>/playground-n8n-<version>, or --user-folder), so a second
 * start is fast and keeps what you built. Nothing binds beyond 127.0.0.1; nothing calls out to the internet.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

import { DEMO_API_KEY, startSandbox, type Sandbox } from '../sandbox/server';
import {
	assertPortFree,
	HOST,
	importCredentials,
	importWorkflows,
	N8nServer,
	N8N_VERSION,
	onSignals,
	packAndInstall,
	PROJECT_ROOT,
	provision,
	type N8nOptions,
} from './runtime';
import {
	MCP_EXAMPLE_FILE,
	MCP_TOKEN,
	MCP_WORKFLOW_ID,
	mcpCredential,
	mcpUrl,
	publishWithCli,
} from './mcp';

const OWNER = {
	email: 'owner@example.com',
	password: 'Outreach-Playground-1',
	firstName: 'Playground',
	lastName: 'Owner',
};
const CREDENTIAL = {
	id: 'OutreachAccount1',
	name: 'Outreach Automation account',
	type: 'outreachAutomationApi',
};
const EXAMPLES_DIR = path.join(PROJECT_ROOT, 'examples');

interface Flags {
	port: number;
	sandboxPort: number;
	brokerPort: number;
	fresh: boolean;
	userFolder?: string;
}

function usage(): string {
	return [
		'Usage: npm run dev [-- --port <n8n port>] [--sandbox-port <port>] [--fresh]',
		'  --port          n8n editor port (env N8N_PORT, default 5678)',
		'  --sandbox-port  sandbox API port (env SANDBOX_PORT, default 4010)',
		"  --broker-port   n8n task runner broker port (env N8N_RUNNERS_BROKER_PORT, default: n8n's port + 1)",
		'  --fresh         delete the playground n8n (workflows, executions, account) and start anew',
		'  --user-folder   keep the playground n8n there (default: <cache>/playground-n8n-<version>)',
	].join('\n');
}

function parseFlags(argv: string[]): Flags {
	const env = process.env;
	const values: Record<string, string | undefined> = {
		port: env.N8N_PORT,
		'sandbox-port': env.SANDBOX_PORT,
		'broker-port': env.N8N_RUNNERS_BROKER_PORT,
		'user-folder': undefined,
	};
	let fresh = false;
	for (let i = 0; i < argv.length; i++) {
		const arg = argv[i];
		if (arg === '--help' || arg === '-h') {
			process.stdout.write(`${usage()}\n`);
			process.exit(0);
		}
		if (arg === '--fresh') {
			fresh = true;
			continue;
		}
		const match = /^--(port|sandbox-port|broker-port|user-folder)(?:=(.*))?$/.exec(arg);
		if (!match) throw new Error(`Unknown argument "${arg}"\n${usage()}`);
		values[match[1]] = match[2] ?? argv[++i];
	}
	const port = (name: string, fallback: number) => {
		const raw = values[name];
		if (raw === undefined || raw === '') return fallback;
		const value = Number(raw);
		if (!Number.isInteger(value) || value < 1 || value > 65535)
			throw new Error(`--${name} must be a port number, not "${raw}"`);
		return value;
	};
	const n8nPort = port('port', 5678);
	const userFolder = values['user-folder'] ? path.resolve(values['user-folder']) : undefined;
	return {
		port: n8nPort,
		sandboxPort: port('sandbox-port', 4010),
		brokerPort: port('broker-port', n8nPort + 1),
		fresh,
		userFolder,
	};
}

const started = Date.now();
const say = (message: string) =>
	process.stderr.write(`[dev +${((Date.now() - started) / 1000).toFixed(1)}s] ${message}\n`);

/** What was imported last time, so a restart only re-imports what changed (and keeps your edits otherwise). */
interface PlaygroundState {
	credentialBaseUrl?: string;
	/** The id the credential was imported with (the examples reference it). */
	credentialId?: string;
	mcpCredential?: boolean;
	examples?: Record<string, string>;
}

function readState(file: string): PlaygroundState {
	try {
		return JSON.parse(fs.readFileSync(file, 'utf8')) as PlaygroundState;
	} catch {
		return {};
	}
}

async function main(): Promise<void> {
	const flags = parseFlags(process.argv.slice(2));
	let sandbox: Sandbox | undefined;
	let n8n: N8nServer | undefined;
	const stop = async () => {
		say('stopping n8n and the sandbox ...');
		await n8n?.stop();
		await sandbox?.stop();
		say('stopped.');
	};
	onSignals(stop, { orphanCheck: true });

	await assertPortFree(flags.port, 'n8n editor (--port / N8N_PORT)');
	await assertPortFree(
		flags.brokerPort,
		'n8n task runner broker (--broker-port / N8N_RUNNERS_BROKER_PORT)',
	);
	await assertPortFree(flags.sandboxPort, 'sandbox (--sandbox-port / SANDBOX_PORT)');

	say(
		`provisioning Node 24 + n8n ${N8N_VERSION} (the first run downloads 2-3 GB and takes several minutes; later runs reuse the cache) ...`,
	);
	const runtime = await provision();
	// One folder per n8n version: a database written by one major line is not for the other.
	const userFolder =
		flags.userFolder ?? path.join(runtime.cacheDir, `playground-n8n-${runtime.n8nVersion}`);
	if (flags.fresh) {
		say(`--fresh: deleting ${userFolder}`);
		fs.rmSync(userFolder, { recursive: true, force: true });
	}
	fs.mkdirSync(userFolder, { recursive: true });
	const stateFile = path.join(userFolder, 'playground-state.json');
	const state = readState(stateFile);
	const options: N8nOptions = {
		userFolder,
		port: flags.port,
		brokerPort: flags.brokerPort,
		logFile: path.join(userFolder, 'n8n.log'),
	};

	sandbox = await startSandbox({ port: flags.sandboxPort });
	const counts = sandbox.store.counts();
	say(
		`sandbox API on ${sandbox.url} (${counts.leads} leads, ${counts.campaigns} campaigns, ${counts.messages} messages)`,
	);

	say('installing the package into n8n from `npm pack` (as users get it) ...');
	await packAndInstall(userFolder);

	// Again when the credential's id changed since: the examples name it by id.
	if (state.credentialBaseUrl !== sandbox.url || state.credentialId !== CREDENTIAL.id) {
		say(`importing the credential "${CREDENTIAL.name}" -> ${sandbox.url} ...`);
		await importCredentials(runtime, options, [
			{ ...CREDENTIAL, data: { baseUrl: sandbox.url, apiKey: DEMO_API_KEY } },
		]);
		state.credentialBaseUrl = sandbox.url;
		state.credentialId = CREDENTIAL.id;
		fs.writeFileSync(stateFile, JSON.stringify(state, null, 2));
	}
	if (!state.mcpCredential) {
		say(`importing the MCP Server Trigger's Bearer token credential (token ${MCP_TOKEN}) ...`);
		await importCredentials(runtime, options, [mcpCredential()]);
		state.mcpCredential = true;
		fs.writeFileSync(stateFile, JSON.stringify(state, null, 2));
	}

	const examples = fs
		.readdirSync(EXAMPLES_DIR)
		.filter((f) => f.endsWith('.json'))
		.sort();
	const changed = examples.filter((file) => {
		const hash = createHash('sha256')
			.update(fs.readFileSync(path.join(EXAMPLES_DIR, file)))
			.digest('hex');
		return state.examples?.[file] !== hash;
	});
	if (changed.length) {
		say(`importing example workflows: ${changed.join(', ')} ...`);
		await importWorkflows(
			runtime,
			options,
			changed.map((file) => JSON.parse(fs.readFileSync(path.join(EXAMPLES_DIR, file), 'utf8'))),
		);
		state.examples = { ...state.examples };
		for (const file of changed) {
			state.examples[file] = createHash('sha256')
				.update(fs.readFileSync(path.join(EXAMPLES_DIR, file)))
				.digest('hex');
		}
		fs.writeFileSync(stateFile, JSON.stringify(state, null, 2));
		// Importing leaves a workflow unpublished: publish the MCP example again, so its URL answers.
		if (changed.includes(path.basename(MCP_EXAMPLE_FILE))) {
			say(
				'publishing "Outreach Automation over MCP" (its MCP Server Trigger serves the tools) ...',
			);
			await publishWithCli(runtime, options, MCP_WORKFLOW_ID);
		}
	}

	say(`starting n8n on http://${HOST}:${flags.port} (log: ${options.logFile}) ...`);
	n8n = new N8nServer(runtime, options);
	await n8n.start();
	say(`n8n ready after ${(n8n.startupMs / 1000).toFixed(1)} s`);
	try {
		const created = await n8n.ensureOwner(OWNER);
		if (created) say('owner account created');
	} catch (error) {
		say(
			`could not sign in as ${OWNER.email} (${(error as Error).message.slice(0, 120)}): did you change the password? --fresh resets it.`,
		);
	}

	const editor = `http://${HOST}:${flags.port}`;
	process.stdout.write(
		[
			'',
			'  Outreach Automation playground is running',
			'',
			`  n8n editor     ${editor}`,
			`  login          ${OWNER.email} / ${OWNER.password}`,
			`  sandbox API    ${sandbox.url}/api/v1   (API key: ${DEMO_API_KEY})`,
			`  credential     "${CREDENTIAL.name}" (already set up)`,
			`  examples       Overview > the "Outreach: ..." workflows and "Outreach Automation over MCP"`,
			`  MCP server     ${mcpUrl(editor)}   (Authorization: Bearer ${MCP_TOKEN})`,
			`  simulate reply curl -X POST ${sandbox.url}/__sandbox/reply`,
			`  n8n log        ${options.logFile}`,
			'',
			`  Search the nodes panel for "Outreach". Ready in ${((Date.now() - started) / 1000).toFixed(1)} s. Ctrl+C stops everything.`,
			'',
		].join('\n') + '\n',
	);

	// Runs until a signal; if n8n dies on its own, say so and stop (never hang on a dead editor).
	const code = await n8n.unexpectedExit();
	say(`n8n exited unexpectedly (code ${code}). Last lines of its log:\n${n8n.logTail(40)}`);
	await stop();
	process.exit(1);
}

main().catch((error: Error) => {
	process.stderr.write(`\n[dev] ${error.message}\n`);
	import('./runtime').then(({ killAllNow }) => {
		killAllNow();
		process.exit(1);
	});
});
