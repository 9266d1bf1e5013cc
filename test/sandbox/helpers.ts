/** Shared setup of the sandbox's own tests: one server per test file, reset before each test. */
import { sandboxApi, sandboxControl, type SandboxApi, type SandboxControl } from './client';
import { startSandbox, type Sandbox, type SandboxOptions } from './server';
import type { SeedInput } from './schemas';

export interface TestSandbox {
	sandbox: Sandbox;
	api: SandboxApi;
	control: SandboxControl;
}

export const EMPTY: SeedInput = { leads: 0, campaigns: 0, messages: 0 };

/** Starts a sandbox for the file; before each test it is reset (with `seed`, by default an empty store). */
export function useSandbox(
	options: Partial<SandboxOptions> = {},
	seed: SeedInput = EMPTY,
): TestSandbox {
	const ctx = {} as TestSandbox;
	beforeAll(async () => {
		ctx.sandbox = await startSandbox(options);
		ctx.api = sandboxApi(ctx.sandbox.url, ctx.sandbox.apiKey);
		ctx.control = sandboxControl(ctx.sandbox.url);
	});
	beforeEach(() => {
		ctx.sandbox.reset(seed);
	});
	afterAll(() => ctx.sandbox?.stop());
	return ctx;
}

export const ISO_SECONDS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;
export const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/;
