import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

import { startSandbox, type Sandbox } from '../sandbox/server';
import { runNode, testCredential } from '../engine/harness';

/** A bare HTTP server that records the headers it receives and answers with an empty list. */
async function headerCapture() {
	const seen: IncomingHttpHeaders[] = [];
	const server = createServer((req, res) => {
		seen.push(req.headers);
		res.setHeader('Content-Type', 'application/json');
		res.end(JSON.stringify({ success: true, data: [], meta: { page: 1, per_page: 1, total: 0 } }));
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	const { port } = server.address() as AddressInfo;
	return {
		url: `http://127.0.0.1:${port}`,
		seen,
		close: () => new Promise((r) => server.close(r)),
	};
}

describe('Outreach Automation API credential', () => {
	let sandbox: Sandbox;

	beforeAll(async () => {
		sandbox = await startSandbox({
			apiKeys: ['good-key-123'],
			seed: { leads: 3, campaigns: 1, messages: 0 },
		});
	});
	afterAll(async () => sandbox.stop());

	it('sends exactly "Authorization: Bearer <key>", from the node and from the credential test', async () => {
		const capture = await headerCapture();
		try {
			const { error } = await runNode(
				{ baseUrl: capture.url, apiKey: 'k-42' },
				{ resource: 'lead', operation: 'getAll', limit: 1 },
			);
			expect(error).toBeUndefined();
			expect((await testCredential({ baseUrl: capture.url, apiKey: 'k-42' })).status).toBe('OK');
			expect(capture.seen.map((h) => h.authorization)).toEqual(['Bearer k-42', 'Bearer k-42']);
		} finally {
			await capture.close();
		}
	});

	it('passes the credential test with a good key', async () => {
		const verdict = await testCredential({ baseUrl: sandbox.url, apiKey: 'good-key-123' });
		expect(verdict).toEqual({ status: 'OK', message: 'Connection successful!' });
		const [entry] = sandbox.requests().slice(-1);
		expect(entry.path).toBe('/api/v1/leads');
		expect(entry.query).toEqual({ per_page: '1' });
	});

	it('fails the credential test with a wrong key, in plain words', async () => {
		const verdict = await testCredential({ baseUrl: sandbox.url, apiKey: 'wrong-key' });
		expect(verdict.status).toBe('Error');
		expect(verdict.message).toMatch(/API key was refused/);
		expect(verdict.message).not.toContain('wrong-key');
	});

	it('fails the credential test when the server says success: false on a 200', async () => {
		sandbox.addFault({ path: '/api/v1/leads', kind: 'false-success' });
		const verdict = await testCredential({ baseUrl: sandbox.url, apiKey: 'good-key-123' });
		expect(verdict).toEqual({
			status: 'Error',
			message: expect.stringMatching(/check the API key/),
		});
	});

	it('refuses a Base URL that is not http(s): the test fails, the node says which field, before any request', async () => {
		expect(
			(await testCredential({ baseUrl: 'ftp://example.com', apiKey: 'good-key-123' })).status,
		).toBe('Error');
		const before = sandbox.requests().length;
		const { error } = await runNode(
			{ baseUrl: 'sandbox.local:4010', apiKey: 'good-key-123' },
			{ resource: 'lead', operation: 'getAll', limit: 1 },
		);
		expect(error?.message).toBe(
			'The Base URL in the Outreach Automation API credential must start with http:// or https://',
		);
		expect(sandbox.requests().length).toBe(before);
	});

	it('reaches /api/v1/... when the Base URL has trailing slashes', async () => {
		const before = sandbox.requests().length;
		const verdict = await testCredential({ baseUrl: `${sandbox.url}//`, apiKey: 'good-key-123' });
		expect(verdict.status).toBe('OK');
		const { items, error } = await runNode(
			{ baseUrl: `${sandbox.url}/`, apiKey: 'good-key-123' },
			{ resource: 'lead', operation: 'getAll', limit: 2 },
		);
		expect(error).toBeUndefined();
		expect(items).toHaveLength(2);
		expect(
			sandbox
				.requests()
				.slice(before)
				.map((r) => r.path),
		).toEqual(['/api/v1/leads', '/api/v1/leads']);
	});

	it.each([
		['ending in /api/v1', (url: string) => `${url}/api/v1`],
		['ending in /api/v1/ with spaces around', (url: string) => `  ${url}/api/v1/ `],
	])(
		'the credential test and the node both reach /api/v1/... with a Base URL %s',
		async (_form, baseUrl) => {
			const before = sandbox.requests().length;
			const credentials = { baseUrl: baseUrl(sandbox.url), apiKey: 'good-key-123' };
			expect((await testCredential(credentials)).status).toBe('OK');
			const { items, error } = await runNode(credentials, {
				resource: 'lead',
				operation: 'getAll',
				limit: 2,
			});
			expect(error).toBeUndefined();
			expect(items).toHaveLength(2);
			expect(
				sandbox
					.requests()
					.slice(before)
					.map((r) => r.path),
			).toEqual(['/api/v1/leads', '/api/v1/leads']);
		},
	);
});
