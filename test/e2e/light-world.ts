/**
 * A smaller world than harness.ts's, for the re-run tests: the sandbox, a fresh n8n user folder with the packed
 * package, the sandbox credential and the given workflows imported; `n8n start` (signed in, with a public API
 * key, the given workflows published) only when asked, so `n8n execute` can run workflows before it.
 */
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
	type Runtime,
} from '../n8n/runtime';
import { OWNER } from './harness';
import { CREDENTIAL, type WorkflowJson } from './workflows';

export interface LightWorld {
	runtime: Runtime;
	sandbox: Sandbox;
	options: N8nOptions;
	userFolder: string;
	n8n: N8nServer;
	/** n8n's public API key, once started (never printed). */
	apiKey?: string;
}

export async function startLightWorld(tag: string, workflows: WorkflowJson[]): Promise<LightWorld> {
	const userFolder = fs.mkdtempSync(path.join(os.tmpdir(), `outreach-${tag}-`));
	(globalThis as { __outreachE2eUserFolder?: string }).__outreachE2eUserFolder = userFolder;
	const runtime = await provision();
	const sandbox = await startSandbox({
		seed: { leads: 0, campaigns: 0, messages: 0 },
		// Pacing is proven elsewhere; here it would only slow the runs.
		rateLimit: 100_000,
		windowMs: 2_000,
	});
	const options: N8nOptions = { userFolder, port: await freePort(), brokerPort: await freePort() };
	const world: LightWorld = {
		runtime,
		sandbox,
		options,
		userFolder,
		n8n: new N8nServer(runtime, options),
	};
	try {
		await packAndInstall(userFolder);
		await importCredentials(runtime, options, [
			{
				...CREDENTIAL,
				type: 'outreachAutomationApi',
				data: { baseUrl: sandbox.url, apiKey: sandbox.apiKey },
			},
		]);
		await importWorkflows(runtime, options, workflows);
		return world;
	} catch (error) {
		await sandbox.stop();
		process.stderr.write(`\n[${tag}] setup failed; n8n user folder kept: ${userFolder}\n`);
		throw error;
	}
}

/** Starts n8n, signs in as the owner, makes a public API key and publishes `publish`. */
export async function serve(world: LightWorld, publish: string[]): Promise<void> {
	await world.n8n.start();
	await world.n8n.ensureOwner(OWNER);
	world.apiKey = await world.n8n.createApiKey('reruns');
	await world.n8n.publish(world.apiKey, publish);
}

export async function stopLightWorld(
	tag: string,
	world: LightWorld | undefined,
	failed: boolean,
): Promise<void> {
	if (!world) return;
	await world.n8n.stop();
	await world.sandbox.stop();
	reportOrClean(tag, world.n8n, world.userFolder, failed);
}
