/**
 * Failures without any HTTP answer, against real sockets through n8n's engine: each kind is named
 * in words (timeout, refused, unknown host, TLS, reset), with the tries made and, for requests that
 * create or send, whether they may have been carried out. Counts connections, never times.
 */
import { resetRateLimitState } from '../../../../nodes/OutreachAutomation/transport/pacing';
import { runNode } from '../../../engine/harness';
import {
	badCertServer,
	closedPort,
	resettingServer,
	silentServer,
	type FailingServer,
} from '../../../engine/sockets';

const KEY = 'network-secret-key-4b2e';
const rl = (value: string) => ({ __rl: true, mode: 'id', value });
const MAYBE_DONE = /may already have been carried out .*check before running it again/;

describe('network failures, one per kind, on real sockets', () => {
	let server: FailingServer | undefined;
	beforeEach(() => resetRateLimitState());
	afterEach(async () => {
		await server?.stop();
		server = undefined;
	});
	const creds = () => ({ baseUrl: server!.baseUrl, apiKey: KEY });

	it('timeout on Create Lead: "did not answer within 2 s (Request Options > Timeout)", tried once, may have been carried out', async () => {
		server = await silentServer();
		const { error, run } = await runNode(creds(), {
			resource: 'lead',
			operation: 'create',
			firstName: 'Slow',
			requestOptions: { timeout: 2000 },
		});
		expect(error?.message).toBe(
			'The Outreach Automation API did not answer within 2 s (Request Options > Timeout)',
		);
		expect(error?.description).toMatch(/\(ECONNABORTED\)/);
		expect(error?.description).toMatch(/the Base URL need not be wrong/);
		expect(error?.description).toMatch(/Tried once\./);
		expect(error?.description).toMatch(MAYBE_DONE);
		expect(error?.description).toMatch(/Raise Request Options > Timeout/);
		expect(server.connections()).toBe(1);
		expect(JSON.stringify(run)).not.toContain(KEY);
	});

	it('timeout on Get Many (safe to repeat): tried 4 times, nothing about being carried out', async () => {
		server = await silentServer();
		const { error } = await runNode(creds(), {
			resource: 'lead',
			operation: 'getAll',
			limit: 5,
			requestOptions: { timeout: 300 },
		});
		expect(error?.message).toBe(
			'The Outreach Automation API did not answer within 300 ms (Request Options > Timeout)',
		);
		expect(error?.description).toMatch(/Tried 4 times\./);
		expect(error?.description).not.toMatch(/carried out/);
		expect(server.connections()).toBe(4);
	});

	it('refused connection on Start Campaign: names host and port, the request was not sent', async () => {
		server = await closedPort();
		const { error } = await runNode(creds(), {
			resource: 'campaign',
			operation: 'start',
			campaignId: rl('cmp_1'),
		});
		const host = new URL(server.baseUrl).host;
		expect(error?.message).toBe(
			`Connection refused at ${host}: the Outreach Automation service is not running there`,
		);
		expect(error?.description).toMatch(/\(ECONNREFUSED\)/);
		expect(error?.description).toMatch(/The request was not sent\. Tried once\./);
		expect(error?.description).not.toMatch(/carried out/);
	});

	it('unknown host (no-such-host.invalid): names the host name, not retried, not sent', async () => {
		const { error } = await runNode(
			{ baseUrl: 'http://no-such-host.invalid', apiKey: KEY },
			{ resource: 'lead', operation: 'get', leadId: rl('ld_1') },
		);
		expect(error?.message).toBe(
			'The host name "no-such-host.invalid" of the Base URL could not be found',
		);
		// ENOTFOUND where DNS answers; EAI_AGAIN where no resolver is reachable.
		expect(error?.description).toMatch(/\((ENOTFOUND|EAI_AGAIN)\)/);
		expect(error?.description).toMatch(/The request was not sent\./);
	});

	it('TLS failure (self-signed certificate) on Pause Campaign: says why and where to turn it off; not retried', async () => {
		server = await badCertServer();
		const { error } = await runNode(creds(), {
			resource: 'campaign',
			operation: 'pause',
			campaignId: rl('cmp_1'),
		});
		expect(error?.message).toBe(
			`The secure connection (TLS) to ${new URL(server.baseUrl).host} failed: its certificate is self-signed`,
		);
		expect(error?.description).toMatch(/\(DEPTH_ZERO_SELF_SIGNED_CERT\)/);
		expect(error?.description).toMatch(/Request Options > Ignore SSL Issues/);
		expect(error?.description).toMatch(/The request was not sent\. Tried once\./);
		expect(server.connections()).toBe(1);
	});

	it('TLS failure on a Get (safe to repeat) is not retried either: a certificate does not change in seconds', async () => {
		server = await badCertServer();
		const { error } = await runNode(creds(), {
			resource: 'lead',
			operation: 'get',
			leadId: rl('ld_1'),
		});
		expect(error?.message).toMatch(/failed: its certificate is self-signed$/);
		expect(server.connections()).toBe(1);
	});

	it('reset connection on Send Message: closed before an answer, tried once, may have been carried out', async () => {
		server = await resettingServer();
		const { error } = await runNode(creds(), {
			resource: 'message',
			operation: 'send',
			leadId: rl('ld_1'),
			body: 'Hello',
		});
		expect(error?.message).toBe(
			'The connection to the Outreach Automation API was closed before an answer arrived',
		);
		expect(error?.description).toMatch(/was reset \(ECONNRESET\)/);
		expect(error?.description).toMatch(/Tried once\./);
		expect(error?.description).toMatch(MAYBE_DONE);
		expect(server.connections()).toBe(1);
	});

	it('reset connection on Get Many is repeated: 4 connections, "Tried 4 times."', async () => {
		server = await resettingServer();
		const { error } = await runNode(creds(), { resource: 'lead', operation: 'getAll', limit: 5 });
		expect(error?.description).toMatch(/Tried 4 times\./);
		expect(server.connections()).toBe(4);
	});
});
