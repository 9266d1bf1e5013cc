/**
 * The API key never leaks: every operation, the trigger, the list searches and the credential test,
 * against a server whose errors echo the key and the Authorization header (the `leaky` profile), in
 * every error style. Everything the execution leaves (run data, errors with every own property,
 * n8n's log lines) is searched for the key and any 8-character part of it.
 */
import type { INodeParameters } from 'n8n-workflow';
import { LoggerProxy } from 'n8n-workflow';

import { listSearch, runNode, testCredential, TriggerHarness } from '../../engine/harness';
import { startSandbox, type Sandbox } from '../../sandbox/server';
import { ERROR_STYLES } from '../../sandbox/schemas';
import type { FaultInput } from '../../sandbox/schemas';

const KEY = 'leakcheck-7f3a9c2e5b1d4a6f8e0c';
const OTHER_KEY = 'leakcheck-other-5e8d2a7b9c1f';
const WRONG_KEY = 'wrong-but-secret-3c9e7a1b5d';
const rl = (value: string) => ({ __rl: true, mode: 'id', value });

/** Every string reachable from a value: own properties (non-enumerable too: message, stack, cause). */
function allText(value: unknown, seen = new Set<unknown>(), out: string[] = []): string[] {
	if (typeof value === 'string') out.push(value);
	else if (typeof value === 'object' && value !== null && !seen.has(value)) {
		seen.add(value);
		for (const name of Object.getOwnPropertyNames(value)) {
			out.push(name);
			const descriptor = Object.getOwnPropertyDescriptor(value, name);
			if (descriptor && 'value' in descriptor) allText(descriptor.value, seen, out);
		}
	}
	return out;
}

function partsOf(key: string): string[] {
	const parts: string[] = [];
	for (let i = 0; i + 8 <= key.length; i++) parts.push(key.slice(i, i + 8));
	return parts;
}

/** Each key's parts found in the text (expected: none). */
function leaks(text: string): string[] {
	return [KEY, OTHER_KEY, WRONG_KEY].flatMap(partsOf).filter((part) => text.includes(part));
}

const logged: unknown[] = [];
const capture = (...args: unknown[]) => logged.push(args);
LoggerProxy.init({ error: capture, warn: capture, info: capture, debug: capture });

type Kind = FaultInput;
const CLIENT_ERRORS: Kind[] = [
	{ status: 400 },
	{ status: 401 },
	{ status: 403 },
	{ status: 404 },
	{ status: 409 },
	{ status: 422 },
	{ kind: 'false-success' },
	{ kind: 'malformed' },
];
/** Not repeated for requests that create or send, so they fail at once. */
const ONCE_ERRORS: Kind[] = [{ status: 500 }, { status: 503 }, { kind: 'drop' }];

const OPERATIONS: Array<[string, string, INodeParameters, boolean]> = [
	['lead', 'create', { firstName: 'Ada', additionalFields: {} }, false],
	[
		'lead',
		'upsert',
		{
			linkedinUrl: 'https://www.linkedin.com/in/leak-test',
			firstName: 'Ada',
			additionalFields: {},
		},
		false,
	],
	['lead', 'get', { leadId: rl('ld_1') }, true],
	['lead', 'getAll', { returnAll: true }, true],
	['lead', 'update', { leadId: rl('ld_1'), updateFields: { company: 'X' } }, true],
	['lead', 'delete', { leadId: rl('ld_1') }, false],
	[
		'campaign',
		'create',
		{ name: 'C', steps: { step: [{ type: 'connection_request', note: 'hi' }] } },
		false,
	],
	['campaign', 'get', { campaignId: rl('cmp_1') }, true],
	['campaign', 'getAll', { returnAll: false, limit: 3 }, true],
	['campaign', 'start', { campaignId: rl('cmp_1') }, false],
	['campaign', 'pause', { campaignId: rl('cmp_1') }, false],
	['campaign', 'getAnalytics', { campaignId: rl('cmp_1') }, true],
	['message', 'send', { leadId: rl('ld_1'), body: 'hi' }, false],
	['message', 'get', { messageId: 'msg_1' }, true],
	['message', 'getAll', { returnAll: true, filters: { status: 'sent' } }, true],
];

describe('the API key never leaks', () => {
	let sandbox: Sandbox;
	const found: string[] = [];
	let runs = 0;
	let errorsSeen = 0;

	const inspect = (what: string, value: unknown) => {
		const text = allText(value).join('\n');
		for (const part of leaks(text)) found.push(`${what}: ${part}`);
	};

	beforeAll(async () => {
		sandbox = await startSandbox({
			apiKeys: [KEY, OTHER_KEY],
			// Pacing is not what this test is about: a limit it never reaches.
			rateLimit: 1_000_000,
			profile: 'leaky',
			seed: { leads: 3, campaigns: 2, messages: 3 },
		});
	});
	afterAll(async () => sandbox.stop());

	it.each(ERROR_STYLES)(
		'errorStyle %s: every operation, the trigger, the searches',
		async (style) => {
			sandbox.reset({ leads: 3, campaigns: 2, messages: 3 });
			sandbox.config({ profile: 'leaky', errorStyle: style });
			expect(sandbox.config().echoSecrets).toBe(true);
			const creds = { baseUrl: sandbox.url, apiKey: KEY };

			for (const [resource, operation, parameters, repeatable] of OPERATIONS) {
				// One input item per fault, in order; Continue On Fail keeps every error in the run data.
				const kinds = repeatable ? CLIENT_ERRORS : [...CLIENT_ERRORS, ...ONCE_ERRORS];
				sandbox.clearFaults();
				for (const kind of kinds) sandbox.addFault({ path: '/api/v1/*', ...kind });
				const result = await runNode(
					creds,
					{ resource, operation, ...parameters },
					kinds.map((_, i) => ({ i })),
					{ continueOnFail: true },
				);
				runs++;
				errorsSeen += result.items.filter((item) => item.error || item.json.error).length;
				inspect(`${resource}.${operation}`, result);
				// And once without Continue On Fail: the node's own error.
				sandbox.clearFaults();
				sandbox.addFault({ path: '/api/v1/*', status: 422 });
				const failed = await runNode(creds, { resource, operation, ...parameters });
				expect(failed.error).toBeDefined();
				errorsSeen++;
				inspect(`${resource}.${operation} (stopped)`, failed);
			}

			// Real errors the server produces itself (not injected): 404, 409, 422, 401 for a wrong key.
			sandbox.clearFaults();
			for (const [parameters, credentials] of [
				[{ resource: 'lead', operation: 'get', leadId: rl('nope') }, creds],
				[{ resource: 'campaign', operation: 'pause', campaignId: rl('cmp_1') }, creds],
				[{ resource: 'message', operation: 'send', leadId: rl('nope'), body: 'x' }, creds],
				[
					{ resource: 'lead', operation: 'getAll', limit: 1 },
					{ ...creds, apiKey: WRONG_KEY },
				],
			] as const) {
				const result = await runNode(credentials, parameters as INodeParameters);
				expect(result.error).toBeDefined();
				errorsSeen++;
				inspect(`natural ${parameters.resource}.${parameters.operation}`, result);
			}

			// The trigger, activated and in Fetch Test Event, and the list searches.
			for (const kind of CLIENT_ERRORS) {
				sandbox.clearFaults();
				sandbox.addFault({ path: '/api/v1/*', ...kind, times: 3 });
				for (const mode of ['trigger', 'manual'] as const) {
					const trigger = new TriggerHarness(creds, { options: { emitExisting: true } });
					const error = await trigger.poll(mode).then(
						() => undefined,
						(e: unknown) => e,
					);
					expect(error).toBeDefined();
					errorsSeen++;
					inspect(`trigger ${mode} ${JSON.stringify(kind)}`, [error, trigger.state()]);
				}
				const search = await listSearch(creds, 'searchLeads', 'a').then(
					() => undefined,
					(e: unknown) => e,
				);
				expect(search).toBeDefined();
				inspect(`search ${JSON.stringify(kind)}`, search);
			}

			// The credential test: a wrong key, injected errors, success: false.
			sandbox.clearFaults();
			const verdicts = [await testCredential({ ...creds, apiKey: WRONG_KEY })];
			for (const kind of [{ status: 500 }, { status: 404 }, { kind: 'false-success' }] as Kind[]) {
				sandbox.addFault({ path: '/api/v1/*', ...kind });
				verdicts.push(await testCredential(creds));
			}
			expect(verdicts.map((v) => v.status)).toEqual(['Error', 'Error', 'Error', 'Error']);
			inspect('credential test', verdicts);
			sandbox.clearFaults();
		},
	);

	it('a 429 with a far reset and a 5xx on a read (retried) leak nothing either', async () => {
		sandbox.reset({ leads: 3, campaigns: 2, messages: 3 });
		sandbox.config({ profile: 'leaky' });
		const creds = { baseUrl: sandbox.url, apiKey: OTHER_KEY };
		sandbox.addFault({ path: '/api/v1/*', status: 503, times: 4 });
		const read = await runNode(creds, { resource: 'lead', operation: 'get', leadId: rl('ld_1') });
		expect(read.error?.message).toMatch(/unavailable \(HTTP 503\)/);
		inspect('503 read', read);
		sandbox.addFault({ path: '/api/v1/*', status: 429, retryAfter: 3600 });
		const limited = await runNode(creds, { resource: 'lead', operation: 'getAll', limit: 1 });
		expect(limited.error?.message).toMatch(/HTTP 429/);
		inspect('429', limited);
		runs += 2;
	});

	it('found the key 0 times (checked last, with the log lines)', () => {
		inspect('n8n log lines', logged);
		expect(found.slice(0, 20)).toEqual([]);
		expect(runs).toBeGreaterThan(ERROR_STYLES.length * OPERATIONS.length);
		expect(errorsSeen).toBeGreaterThan(1000);
	});
});
