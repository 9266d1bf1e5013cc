/**
 * The bench's sizes (full and --quick) and its world: one sandbox and one n8n with the packed package, the
 * credentials and every scenario's workflow, started once per run.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import {
	freePort,
	importCredentials,
	importWorkflows,
	N8N_VERSION,
	N8nServer,
	packAndInstall,
	provision,
	type N8nOptions,
} from '../n8n/runtime';
import { startSandbox, type Sandbox } from '../sandbox/server';
import { resetPeak } from './measure';
import { VARIANTS_FULL, VARIANTS_QUICK, type VariantSizes } from './variants';
import {
	benchCases,
	CREDENTIAL,
	HEADER_CREDENTIAL,
	triggerWorkflow,
	type BenchCases,
} from './workflows';

export interface Sizes {
	mode: 'full' | 'quick';
	leads: number;
	items: number;
	backlog: number;
	idlePolls: number;
	rateLimit: number;
	windowMs: number;
	runs: number;
	/** Seconds between the trigger's scheduled polls. */
	pollEverySeconds: number;
	/** Server variants (scenarios 6-8): their own sizes, limits and windows. */
	variants: VariantSizes;
}

export const FULL: Sizes = {
	mode: 'full',
	leads: 10_000,
	items: 500,
	backlog: 1_000,
	idlePolls: 3,
	rateLimit: 100,
	windowMs: 2_000,
	runs: 3,
	pollEverySeconds: 5,
	variants: VARIANTS_FULL,
};
export const QUICK: Sizes = {
	mode: 'quick',
	leads: 2_000,
	items: 100,
	backlog: 200,
	idlePolls: 2,
	rateLimit: 20,
	windowMs: 2_000,
	runs: 1,
	pollEverySeconds: 5,
	variants: VARIANTS_QUICK,
};

export const PER_PAGE = 100;

export interface World {
	sizes: Sizes;
	sandbox: Sandbox;
	n8n: N8nServer;
	options: N8nOptions;
	apiKey: string;
	cases: BenchCases;
	userFolder: string;
	peakResetSupported: boolean;
}

export const log = (message: string) => process.stderr.write(`[bench] ${message}\n`);

export function extraN8nEnv(): Record<string, string> {
	const raw = process.env.BENCH_N8N_ENV?.trim();
	if (!raw) return {};
	return Object.fromEntries(
		raw.split(',').map((pair) => {
			const at = pair.indexOf('=');
			if (at < 1) throw new Error(`BENCH_N8N_ENV: expected KEY=VALUE, got "${pair}"`);
			return [pair.slice(0, at).trim(), pair.slice(at + 1).trim()];
		}),
	);
}

export async function startWorld(
	sizes: Sizes,
	cleanupRef: { world?: Partial<World> },
): Promise<World> {
	const runtime = await provision();
	const sandbox = await startSandbox({
		apiKeys: [`bench-${randomBytes(12).toString('hex')}`],
		rateLimit: sizes.rateLimit,
		windowMs: sizes.windowMs,
		resetFormat: 'epoch-ms',
		maxPerPage: PER_PAGE,
		seed: { leads: 0, campaigns: 0, messages: 0 },
	});
	cleanupRef.world = { sandbox };
	const userFolder = fs.mkdtempSync(path.join(os.tmpdir(), 'outreach-bench-'));
	cleanupRef.world.userFolder = userFolder;
	const options: N8nOptions = {
		userFolder,
		port: await freePort(),
		brokerPort: await freePort(),
		// The bench reads n8n's figures from the sandbox and its own clock: keep n8n's log small.
		// BENCH_N8N_ENV="K=V,K2=V2" adds settings for experiments (reported in the JSON).
		env: { N8N_LOG_LEVEL: 'warn', ...extraN8nEnv() },
	};
	log(`packing the package into ${userFolder}`);
	await packAndInstall(userFolder);
	await importCredentials(runtime, options, [
		{
			...CREDENTIAL,
			type: 'outreachAutomationApi',
			data: { baseUrl: sandbox.url, apiKey: sandbox.apiKey },
		},
		{
			...HEADER_CREDENTIAL,
			type: 'httpHeaderAuth',
			data: { name: 'Authorization', value: `Bearer ${sandbox.apiKey}` },
		},
	]);
	const intervalMs = Math.ceil(sizes.windowMs / sizes.rateLimit);
	const cases = benchCases(sandbox.url, intervalMs);
	await importWorkflows(runtime, options, [
		...Object.values(cases).map((c) => c.workflow),
		triggerWorkflow(sizes.pollEverySeconds),
	]);
	const n8n = new N8nServer(runtime, options);
	cleanupRef.world.n8n = n8n;
	log('starting n8n');
	await n8n.start();
	log(`n8n ${N8N_VERSION} ready in ${(n8n.startupMs / 1000).toFixed(1)} s (pid ${n8n.pid})`);
	await n8n.ensureOwner({
		email: 'bench-owner@example.com',
		password: `Bench-${randomBytes(9).toString('base64url')}1`,
		firstName: 'Bench',
		lastName: 'Owner',
	});
	const apiKey = await n8n.createApiKey('bench');
	await n8n.publish(
		apiKey,
		Object.values(cases).map((c) => c.id),
	);
	const peakResetSupported = n8n.pid !== undefined && resetPeak(n8n.pid);
	return { sizes, sandbox, n8n, options, apiKey, cases, userFolder, peakResetSupported };
}
