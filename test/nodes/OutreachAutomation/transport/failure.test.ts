/**
 * The cause every error declares (n8n-workflow's `Failure`, read by n8n's durable poll scheduler to
 * back off): the mapping itself, then each cause as the action node and the trigger meet it in n8n's
 * engine against the sandbox, the API key still hidden on every error.
 */
import type { INodeParameters } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import { declaredFailure } from '../../../../nodes/OutreachAutomation/transport/failure';
import { MAX_SINGLE_WAIT_MS } from '../../../../nodes/OutreachAutomation/transport/constants';
import {
	networkError,
	rateLimitError,
} from '../../../../nodes/OutreachAutomation/transport/errors';
import { TriggerHarness, runNode } from '../../../engine/harness';
import { startSandbox, type Sandbox } from '../../../sandbox/server';

const NOW = 1_800_000_000_000;

describe('declaredFailure: one cause per outcome', () => {
	it.each([
		[{ kind: 'http', status: 401, envelope: true }, { cause: 'credential-invalid' }],
		[{ kind: 'http', status: 403, envelope: false }, { cause: 'credential-invalid' }],
		[{ kind: 'http', status: 404, envelope: false }, { cause: 'configuration-invalid' }],
		[{ kind: 'http', status: 404, envelope: true }, { cause: 'configuration-invalid' }],
		[{ kind: 'http', status: 422, envelope: true }, { cause: 'configuration-invalid' }],
		[{ kind: 'http', status: 301, envelope: false }, { cause: 'configuration-invalid' }],
		[{ kind: 'http', status: 500, envelope: true }, { cause: 'temporarily-unavailable' }],
		[{ kind: 'http', status: 502, envelope: false }, { cause: 'temporarily-unavailable' }],
		[{ kind: 'http', status: 200, envelope: true }, { cause: 'temporarily-unavailable' }],
		[
			{ kind: 'http', status: 429, envelope: false, resetAt: NOW + 2_000 },
			{ cause: 'rate-limited', retryAfterMs: 2_000, resetsAtEpochMs: NOW + 2_000 },
		],
		[{ kind: 'http', status: 429, envelope: false }, { cause: 'rate-limited' }],
		[
			{ kind: 'rateLimit', resetAt: NOW + MAX_SINGLE_WAIT_MS },
			{
				cause: 'rate-limited',
				retryAfterMs: MAX_SINGLE_WAIT_MS,
				resetsAtEpochMs: NOW + MAX_SINGLE_WAIT_MS,
			},
		],
		[
			{ kind: 'rateLimit', resetAt: NOW + 3_600_000 },
			{ cause: 'quota-exhausted', retryAfterMs: 3_600_000, resetsAtEpochMs: NOW + 3_600_000 },
		],
		[
			{ kind: 'network', failure: { kind: 'tls', code: 'DEPTH_ZERO_SELF_SIGNED_CERT' } },
			{ cause: 'configuration-invalid' },
		],
		[
			{ kind: 'network', failure: { kind: 'unknownHost', code: 'ENOTFOUND' } },
			{ cause: 'configuration-invalid' },
		],
		[
			{ kind: 'network', failure: { kind: 'unknownHost', code: 'EAI_AGAIN' } },
			{ cause: 'temporarily-unavailable' },
		],
		[
			{ kind: 'network', failure: { kind: 'timeout', code: 'ETIMEDOUT' } },
			{ cause: 'temporarily-unavailable' },
		],
		[
			{ kind: 'network', failure: { kind: 'reset', code: 'ECONNRESET' } },
			{ cause: 'temporarily-unavailable' },
		],
		[
			{ kind: 'network', failure: { kind: 'refused', code: 'ECONNREFUSED' } },
			{ cause: 'temporarily-unavailable' },
		],
		[{ kind: 'notTheApi' }, { cause: 'configuration-invalid' }],
		[{ kind: 'tooLong' }, { cause: 'configuration-invalid' }],
	] as const)('%j -> %j', (outcome, failure) => {
		expect(declaredFailure(outcome, NOW)).toEqual(failure);
	});

	it('the builders put it on the error as plain data (a TLS failure, a limit that resets in an hour)', () => {
		const node = {
			id: 'n',
			name: 'N',
			type: 't',
			typeVersion: 1,
			position: [0, 0],
			parameters: {},
		} as never;
		const tls = networkError(node, { kind: 'tls', code: 'CERT_HAS_EXPIRED' }, 'https://x.test', {});
		expect(tls.failure).toEqual({ cause: 'configuration-invalid' });
		const reset = Date.now() + 3_600_000;
		const limited = rateLimitError(node, reset, {}, 1);
		expect(limited.failure).toMatchObject({ cause: 'quota-exhausted', resetsAtEpochMs: reset });
		expect(JSON.parse(JSON.stringify(limited.failure))).toEqual(limited.failure);
	});
});

/** The action node (Get a lead, or Create one) and the trigger's poll, each failing the same way. */
describe('each cause, as the action node and the trigger throw it', () => {
	const KEY = 'failure-key-6b0d7e2a';
	let sandbox: Sandbox;
	const creds = (apiKey = KEY, baseUrl = sandbox.url) => ({ baseUrl, apiKey });

	beforeAll(async () => {
		sandbox = await startSandbox({
			apiKeys: [
				KEY,
				'failure-hour-key-1',
				'failure-hour-key-2',
				'failure-429-key',
				'failure-429-read-key',
			],
			seed: { leads: 3, campaigns: 1, messages: 3 },
			rateLimit: 1e6,
		});
	});
	beforeEach(() => sandbox.reset());
	afterAll(async () => sandbox.stop());

	const actionError = async (
		c: { baseUrl: string; apiKey: string },
		parameters?: INodeParameters,
	) => {
		const leadId = sandbox.store.findLeads({})[0]?.id ?? 'ld_x';
		const { error } = await runNode(
			c,
			parameters ?? {
				resource: 'lead',
				operation: 'get',
				leadId: { __rl: true, mode: 'id', value: leadId },
			},
		);
		return error as unknown as NodeApiError;
	};
	const triggerError = async (c: { baseUrl: string; apiKey: string }) =>
		(await new TriggerHarness(c).poll().catch((e: unknown) => e)) as NodeApiError;
	const both = async (c: { baseUrl: string; apiKey: string }) => [
		await actionError(c),
		await triggerError(c),
	];

	it('a refused key: credential-invalid, the key echoed by the server hidden', async () => {
		sandbox.config({ echoSecrets: true });
		for (const error of await both(creds('not-the-key-9f3c51'))) {
			expect(error.message).toContain('refused the API key');
			expect(error.failure).toEqual({ cause: 'credential-invalid' });
			expect(
				JSON.stringify({ ...error, message: error.message, description: error.description }),
			).not.toContain('not-the-key-9f3c51');
		}
	});

	it('a key limited for an hour: quota-exhausted, with the reset the server gave', async () => {
		sandbox.config({ rateLimit: 1, windowMs: 3_600_000 });
		const [action, trigger] = [
			await actionError(creds('failure-hour-key-1')).then(
				async () => await actionError(creds('failure-hour-key-1')),
			),
			await triggerError(creds('failure-hour-key-2')).then(
				async () => await triggerError(creds('failure-hour-key-2')),
			),
		];
		for (const error of [action, trigger]) {
			expect(error.failure).toMatchObject({ cause: 'quota-exhausted' });
			const { resetsAtEpochMs, retryAfterMs } = error.failure as {
				resetsAtEpochMs: number;
				retryAfterMs: number;
			};
			expect(resetsAtEpochMs - Date.now()).toBeGreaterThan(3_500_000);
			expect(retryAfterMs).toBeGreaterThan(3_500_000);
		}
	});

	it('a 429 on a create that may have run (not repeated): rate-limited, with the reset', async () => {
		sandbox.config({ errorStyle: 'html' });
		sandbox.addFault({ method: 'POST', path: '/api/v1/leads', status: 429, retryAfter: 30 });
		// A key of its own: this process then paces that key until the reset.
		const error = await actionError(creds('failure-429-key'), {
			resource: 'lead',
			operation: 'create',
			firstName: 'Ada',
		});
		expect(error.failure).toMatchObject({ cause: 'rate-limited' });
		expect((error.failure as { retryAfterMs: number }).retryAfterMs).toBeGreaterThan(0);
	});

	// The trigger only: the action node's reads take the same path, and 7 tries take a while.
	it('a 429 on every try of a poll, after the retries: rate-limited, with the reset', async () => {
		sandbox.addFault({ path: '/api/v1/*', status: 429, retryAfter: 1, times: 40 });
		for (const error of [await triggerError(creds('failure-429-read-key'))]) {
			expect(error.failure).toMatchObject({ cause: 'rate-limited' });
			const { retryAfterMs } = error.failure as { retryAfterMs: number };
			expect(retryAfterMs).toBeGreaterThan(0);
			expect(retryAfterMs).toBeLessThanOrEqual(2_000);
		}
	});

	it('a Base URL that serves a website (HTML 404): configuration-invalid', async () => {
		sandbox.config({ htmlSite: true });
		for (const error of await both(creds()))
			expect(error.failure).toEqual({ cause: 'configuration-invalid' });
	});

	it('an answer that is not JSON: configuration-invalid', async () => {
		sandbox.addFault({ path: '/api/v1/*', kind: 'malformed', times: 2 });
		for (const error of await both(creds()))
			expect(error.failure).toEqual({ cause: 'configuration-invalid' });
	});

	it('a host that does not exist: configuration-invalid', async () => {
		for (const error of await both(creds(KEY, 'http://no-such-host.invalid')))
			expect(error.failure).toEqual({ cause: 'configuration-invalid' });
	});

	it('503 on every try, after the retries: temporarily-unavailable', async () => {
		sandbox.addFault({ path: '/api/v1/*', status: 503, times: 8 });
		for (const error of await both(creds())) {
			expect(error.failure).toEqual({ cause: 'temporarily-unavailable' });
			expect(error.description).toContain('Tried 4 times');
		}
	});

	it('an input error caught before any request declares nothing', async () => {
		const since = sandbox.requests().length;
		const { error } = await runNode(creds(), { resource: 'lead', operation: 'create' });
		expect(error?.message).toBe('A lead needs at least one field');
		expect((error as unknown as NodeOperationError).failure).toBeUndefined();
		expect(sandbox.requests(since)).toHaveLength(0);
	});
});
