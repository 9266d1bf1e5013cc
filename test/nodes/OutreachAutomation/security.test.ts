import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

import { runNode, testCredential } from '../../engine/harness';
import { startSandbox, type Sandbox } from '../../sandbox/server';

const KEY = 'sec-key-0123456789abcdef';
const rl = (value: string) => ({ __rl: true, mode: 'id', value });

/** Every operation that puts an id in its path, with the parameters that reach it. */
const ID_OPERATIONS: Array<[string, string, string, string, (id: string) => object]> = [
	['lead', 'get', 'GET', '/api/v1/leads/', (id) => ({ leadId: rl(id) })],
	['lead', 'delete', 'DELETE', '/api/v1/leads/', (id) => ({ leadId: rl(id) })],
	[
		'lead',
		'update',
		'PATCH',
		'/api/v1/leads/',
		(id) => ({ leadId: rl(id), updateFields: { company: 'X' } }),
	],
	['campaign', 'get', 'GET', '/api/v1/campaigns/', (id) => ({ campaignId: rl(id) })],
	['campaign', 'start', 'POST', '/api/v1/campaigns/', (id) => ({ campaignId: rl(id) })],
	['campaign', 'pause', 'POST', '/api/v1/campaigns/', (id) => ({ campaignId: rl(id) })],
	['campaign', 'getAnalytics', 'GET', '/api/v1/campaigns/', (id) => ({ campaignId: rl(id) })],
	['message', 'get', 'GET', '/api/v1/messages/', (id) => ({ messageId: id })],
];

/** A bare HTTP server that records the headers it receives and answers with an empty list. */
async function headerCapture() {
	const seen: IncomingHttpHeaders[] = [];
	const server = createServer((req, res) => {
		seen.push(req.headers);
		res.setHeader('Content-Type', 'application/json');
		res.end(JSON.stringify({ success: true, data: [], meta: { total: 0 } }));
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	const { port } = server.address() as AddressInfo;
	return { port, seen, close: () => new Promise((r) => server.close(r)) };
}

describe('Hostile and careless input', () => {
	let sandbox: Sandbox;
	let creds: { baseUrl: string; apiKey: string };

	beforeAll(async () => {
		sandbox = await startSandbox({
			apiKeys: [KEY],
			seed: { leads: 2, campaigns: 1, messages: 1 },
		});
		creds = { baseUrl: sandbox.url, apiKey: KEY };
	});
	afterAll(async () => sandbox.stop());

	describe('ids', () => {
		// The last one as an expression gone wrong resolves it (with spaces, which n8n's locator allows there).
		it.each(
			ID_OPERATIONS.flatMap(([resource, operation, , , params]) =>
				['.', '..', '={{ " " + ".." + " " }}'].map(
					(id) => [id, resource, operation, params] as const,
				),
			),
		)(
			'the id %j is refused by %s %s naming the field, before any request',
			async (id, resource, operation, params) => {
				const before = sandbox.requests().length;
				const { error } = await runNode(creds, { resource, operation, ...params(id) });
				expect(error?.message).toMatch(/^(Lead|Campaign|Message) ID "\.\.?" is not a valid ID$/);
				expect(sandbox.requests().length).toBe(before);
			},
		);

		it.each([
			['a slash', 'a/b'],
			['a question mark', 'a?b=1'],
			['a hash', 'a#b'],
			['a percent sign', '100%25'],
			['dots around a slash', '../leads'],
			['unicode', 'lëad-日本-🙂'],
			['500 characters', 'x'.repeat(500)],
		])('an id with %s is sent as one path segment of the operation', async (_what, id) => {
			for (const [resource, operation, method, prefix, params] of ID_OPERATIONS) {
				const before = sandbox.requests().length;
				const { error } = await runNode(creds, { resource, operation, ...params(id) });
				const sent = sandbox.requests().slice(before);
				expect(sent).toHaveLength(1);
				expect(sent[0].method).toBe(method);
				expect(sent[0].path.startsWith(prefix)).toBe(true);
				const segment = sent[0].path.slice(prefix.length).split('/')[0];
				expect(decodeURIComponent(segment)).toBe(id);
				expect(error?.message).toMatch(/was not found/);
			}
		});
	});

	describe('credentials', () => {
		it('a Base URL with user:password@ is refused by name and never used as Basic auth, nor shown', async () => {
			const capture = await headerCapture();
			try {
				const baseUrl = `http://ada:hunter2-secret@127.0.0.1:${capture.port}`;
				const { error } = await runNode(
					{ baseUrl, apiKey: KEY },
					{ resource: 'lead', operation: 'getAll', limit: 1 },
				);
				expect(error?.message).toBe(
					'The Base URL in the Outreach Automation API credential must not contain a user name or password',
				);
				const verdict = await testCredential({ baseUrl, apiKey: KEY });
				expect(verdict.status).toBe('Error');
				expect(JSON.stringify([error, verdict])).not.toContain('hunter2');
				expect(capture.seen).toHaveLength(0);
			} finally {
				await capture.close();
			}
		});

		it.each([
			['ftp://example.com', /must start with http:\/\/ or https:\/\//],
			['javascript:alert(1)', /must start with http:\/\/ or https:\/\//],
			['https://api.example.com/?token=abc', /must not contain a query/],
			['https://api.example.com/#x', /must not contain a query \(\?…\) or a fragment/],
			['https://api.exa mple.com', /must be a plain web address/],
		])('the Base URL %j is refused with a message naming the field', async (baseUrl, message) => {
			const { error } = await runNode(
				{ baseUrl, apiKey: KEY },
				{ resource: 'lead', operation: 'getAll', limit: 1 },
			);
			expect(error?.message).toMatch(/^The Base URL in the Outreach Automation API credential /);
			expect(error?.message).toMatch(message);
			expect((await testCredential({ baseUrl, apiKey: KEY })).status).toBe('Error');
		});

		it('a key pasted with spaces or a line break around it works, in the node and the credential test', async () => {
			const apiKey = `  ${KEY}\r\n`;
			const before = sandbox.requests().length;
			const { error, items } = await runNode(
				{ baseUrl: sandbox.url, apiKey },
				{ resource: 'lead', operation: 'getAll', limit: 1 },
			);
			expect(error).toBeUndefined();
			expect(items).toHaveLength(1);
			expect(await testCredential({ baseUrl: sandbox.url, apiKey })).toEqual({
				status: 'OK',
				message: 'Connection successful!',
			});
			expect(
				sandbox
					.requests()
					.slice(before)
					.map((r) => r.status),
			).toEqual([200, 200]);
			// Sent exactly as "Bearer <key>": a service stricter than the sandbox refuses the spaces.
			const capture = await headerCapture();
			try {
				const url = `http://127.0.0.1:${capture.port}`;
				await runNode(
					{ baseUrl: url, apiKey },
					{ resource: 'lead', operation: 'getAll', limit: 1 },
				);
				await testCredential({ baseUrl: url, apiKey });
				expect(capture.seen.map((h) => h.authorization)).toEqual([
					`Bearer ${KEY}`,
					`Bearer ${KEY}`,
				]);
			} finally {
				await capture.close();
			}
		});

		it.each([
			['a space', `${KEY.slice(0, 5)} ${KEY.slice(5)}`],
			['a line break', `${KEY.slice(0, 5)}\n${KEY.slice(5)}`],
			['a zero-width space', `${KEY.slice(0, 5)}\u200b${KEY.slice(5)}`],
			['a control character', `${KEY.slice(0, 5)}\u0007${KEY.slice(5)}`],
		])(
			'a key with %s inside is refused by name before any request; the credential test says why',
			async (_what, apiKey) => {
				const before = sandbox.requests().length;
				const { error } = await runNode(
					{ baseUrl: sandbox.url, apiKey },
					{ resource: 'lead', operation: 'getAll', limit: 1 },
				);
				expect(error?.message).toBe(
					'The API Key in the Outreach Automation API credential contains spaces, line breaks or invisible characters',
				);
				expect(sandbox.requests().length).toBe(before);
				const verdict = await testCredential({ baseUrl: sandbox.url, apiKey });
				expect(verdict).toEqual({
					status: 'Error',
					message: expect.stringMatching(/refused \(HTTP 401\).*no spaces or line breaks inside/),
				});
			},
		);
	});

	describe('object keys from users', () => {
		it.each(['__proto__', 'constructor', 'prototype'])(
			'a custom field named %s is refused with a clear message, before any request',
			async (name) => {
				const before = sandbox.requests().length;
				for (const [operation, extra] of [
					['create', { firstName: 'Ada', additionalFields: {} }],
					['update', { leadId: rl('ld_x'), updateFields: {} }],
				] as const) {
					const fields = { customFields: { field: [{ name, value: 'v' }] } };
					const parameters =
						operation === 'create'
							? { ...extra, additionalFields: fields }
							: { ...extra, updateFields: fields };
					const { error } = await runNode(creds, { resource: 'lead', operation, ...parameters });
					expect(error?.message).toBe(`Custom Fields: "${name}" cannot be used as a field name`);
				}
				expect(sandbox.requests().length).toBe(before);
				expect(Object.prototype).not.toHaveProperty('polluted');
			},
		);

		it.each(['__proto__', 'constructor', 'prototype'])(
			'raw JSON steps using %s (at any depth) are refused naming the step',
			async (name) => {
				const before = sandbox.requests().length;
				const stepsJson = `[{"type":"message","body":"hi"},{"type":"x","meta":{"${name}":{"polluted":true}}}]`;
				const { error } = await runNode(creds, {
					resource: 'campaign',
					operation: 'create',
					name: 'C',
					stepsMode: 'json',
					stepsJson,
				});
				expect(error?.message).toBe(`Steps (JSON): step 2 uses "${name}", which cannot be a key`);
				expect(sandbox.requests().length).toBe(before);
				expect(({} as Record<string, unknown>).polluted).toBeUndefined();
			},
		);
	});
});
