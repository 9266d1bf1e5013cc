/**
 * The one request pipeline, end to end through n8n's engine against the sandbox: paging, pacing by
 * the rate-limit headers, retries (only where safe), and the errors a user sees. Counts, not times.
 */
import { resetPageSizes } from '../../../../nodes/OutreachAutomation/transport/pages';
import { resetRateLimitState } from '../../../../nodes/OutreachAutomation/transport/pacing';
import { runNode } from '../../../engine/harness';
import { startSandbox, type Sandbox } from '../../../sandbox/server';

const rl = (value: string) => ({ __rl: true, mode: 'id', value });
const KEY = 'pipeline-secret-key-7f3a';

describe('request pipeline', () => {
	let sandbox: Sandbox;
	let creds: { baseUrl: string; apiKey: string };

	beforeAll(async () => {
		sandbox = await startSandbox({ apiKeys: [KEY], seed: { leads: 0, campaigns: 0, messages: 0 } });
		creds = { baseUrl: sandbox.url, apiKey: KEY };
	});
	beforeEach(() => {
		// A fresh server (config back to its start options) and a fresh n8n process's view of its window.
		sandbox.reset({ leads: 0, campaigns: 0, messages: 0 });
		resetRateLimitState();
		resetPageSizes();
	});
	afterAll(async () => sandbox.stop());

	const addLeads = (n: number) => {
		for (let i = 0; i < n; i++)
			sandbox.store.addLead({ first_name: `Lead${i}`, company: `Company ${i % 17}` });
	};
	const sentSince = (since: number) => sandbox.requests().slice(since);

	describe('paging', () => {
		it('Return All over 1,234 leads (max per_page 100) = exactly 13 requests and 1,234 distinct items', async () => {
			addLeads(1234);
			const { items, error } = await runNode(creds, {
				resource: 'lead',
				operation: 'getAll',
				returnAll: true,
			});
			expect(error).toBeUndefined();
			expect(sandbox.stats().requests).toBe(13);
			expect(new Set(items.map((i) => i.json.id)).size).toBe(1234);
			expect(items).toHaveLength(1234);
		});

		it('trusts meta.per_page when the server clamps the page size (max 40 → 31 requests)', async () => {
			sandbox.config({ maxPerPage: 40 });
			addLeads(1234);
			const { items } = await runNode(creds, {
				resource: 'lead',
				operation: 'getAll',
				returnAll: true,
			});
			expect(new Set(items.map((i) => i.json.id)).size).toBe(1234);
			expect(sandbox.stats().requests).toBe(31);
			expect(sandbox.requests()[0].query.per_page).toBe('1000');
		});

		it('Limit 7 = one request asking for 7; Limit 250 = 3 requests', async () => {
			addLeads(400);
			const seven = await runNode(creds, { resource: 'lead', operation: 'getAll', limit: 7 });
			expect(seven.items).toHaveLength(7);
			expect(sandbox.requests().map((r) => r.query)).toEqual([{ page: '1', per_page: '7' }]);
			const since = sandbox.requests().length;
			const many = await runNode(creds, { resource: 'lead', operation: 'getAll', limit: 250 });
			expect(new Set(many.items.map((i) => i.json.id)).size).toBe(250);
			expect(sentSince(since)).toHaveLength(3);
		});

		it('a server that ignores `page` is detected: a clear error, no loop, no duplicates', async () => {
			sandbox.config({ ignorePage: true });
			addLeads(250);
			const { items, error } = await runNode(creds, {
				resource: 'lead',
				operation: 'getAll',
				returnAll: true,
			});
			expect(items).toHaveLength(0);
			expect(error?.message).toMatch(/ignore paging/);
			// Page 2 repeats page 1; page 1 read again says which: the same again (the server ignores
			// `page`), not a list that moved by exactly a page between two reads.
			expect(sandbox.stats().requests).toBe(3);
		});

		it('an empty list is one request and no items', async () => {
			const { items, error } = await runNode(creds, {
				resource: 'lead',
				operation: 'getAll',
				returnAll: true,
			});
			expect(error).toBeUndefined();
			expect(items).toHaveLength(0);
			expect(sandbox.stats().requests).toBe(1);
		});
	});

	describe('rate limit', () => {
		const createLeads = (n: number) =>
			runNode(
				creds,
				{
					resource: 'lead',
					operation: 'create',
					firstName: '={{ $json.first }}',
					company: 'Paced Inc',
				},
				Array.from({ length: n }, (_, i) => ({ first: `Paced${i}` })),
			);

		it('500 concurrent Create Lead items in a 100-per-second window: each created exactly once, none failed', async () => {
			sandbox.config({ rateLimit: 100, windowMs: 1000, resetFormat: 'epoch-ms' });
			const { items, error } = await createLeads(500);
			const stats = sandbox.stats();
			// Figures for the issue note; the assertions below are on counts only.
			process.stdout.write(
				`[500 creates, 100/1s window, epoch-ms] requests=${stats.requests} 429s=${stats.rateLimited} created=${stats.creates.lead}\n`,
			);
			expect(error).toBeUndefined();
			expect(items).toHaveLength(500);
			expect(items.filter((i) => i.error)).toHaveLength(0);
			expect(stats.creates.lead).toBe(500);
			const names = [...sandbox.store.leads.values()].map((l) => l.first_name);
			expect(new Set(names).size).toBe(500);
			expect(stats.rateLimited).toBe(0);
		});

		it.each(['epoch-s', 'epoch-ms', 'delta-s', 'http-date'] as const)(
			'paces by X-RateLimit-Reset in %s format: 150 creates, no 429, each once',
			async (resetFormat) => {
				sandbox.config({ rateLimit: 50, windowMs: 1000, resetFormat });
				const { items, error } = await createLeads(150);
				const stats = sandbox.stats();
				process.stdout.write(
					`[150 creates, 50/1s window, ${resetFormat}] requests=${stats.requests} 429s=${stats.rateLimited}\n`,
				);
				expect(error).toBeUndefined();
				expect(items.filter((i) => i.error)).toHaveLength(0);
				expect(stats.creates.lead).toBe(150);
				expect(stats.rateLimited).toBe(0);
			},
		);

		it('a 429 without headers is waited out with backoff and retried, even for a create (nothing was done)', async () => {
			sandbox.addFault({ method: 'POST', path: '/api/v1/leads', kind: '429-no-headers', times: 2 });
			const { items, error } = await createLeads(1);
			expect(error).toBeUndefined();
			expect(items).toHaveLength(1);
			expect(sandbox.stats().rateLimited).toBe(2);
			expect(sandbox.stats().creates.lead).toBe(1);
		});

		it('a limit that resets too far away fails at once, saying when it resets', async () => {
			sandbox.config({ rateLimit: 1, windowMs: 3_600_000, resetFormat: 'epoch-s' });
			const { error } = await runNode(creds, { resource: 'lead', operation: 'getAll', limit: 1 }, [
				{},
				{},
			]);
			expect(error?.message).toMatch(
				/^Rate limit of the Outreach Automation API reached \(HTTP 429\)\. It resets at \d{4}-\d\d-\d\dT[\d:.]+Z \(in \d+ s\)\./,
			);
			expect(sandbox.stats().requests).toBe(1);
		});
	});

	describe('retries', () => {
		it('a 500 on a GET is retried; the second answer is used', async () => {
			addLeads(3);
			sandbox.addFault({ method: 'GET', path: '/api/v1/leads', status: 500 });
			const { items, error } = await runNode(creds, {
				resource: 'lead',
				operation: 'getAll',
				returnAll: true,
			});
			expect(error).toBeUndefined();
			expect(items).toHaveLength(3);
			expect(sandbox.requests().map((r) => r.status)).toEqual([500, 200]);
		});

		it('a dropped connection on a GET is retried', async () => {
			const lead = sandbox.store.addLead({ first_name: 'Drop' });
			sandbox.addFault({ method: 'GET', path: `/api/v1/leads/${lead.id}`, kind: 'drop' });
			const { items, error } = await runNode(creds, {
				resource: 'lead',
				operation: 'get',
				leadId: rl(lead.id),
			});
			expect(error).toBeUndefined();
			expect(items[0].json.id).toBe(lead.id);
			expect(sandbox.stats().requests).toBe(2);
		});

		it('a 500 after a Create Lead was carried out is not retried: the server counts one create', async () => {
			sandbox.addFault({ method: 'POST', path: '/api/v1/leads', status: 500, after: true });
			const { error } = await runNode(creds, {
				resource: 'lead',
				operation: 'create',
				firstName: 'Once',
			});
			expect(error?.message).toBe('The Outreach Automation service is unavailable (HTTP 500)');
			expect(error?.description).toMatch(
				/not repeated because it may already have been carried out/,
			);
			expect(sandbox.stats().creates.lead).toBe(1);
			expect(sandbox.stats().requests).toBe(1);
		});

		it('a lost answer to Send Message is not retried: one message sent', async () => {
			const lead = sandbox.store.addLead({ first_name: 'Ada' });
			sandbox.addFault({ method: 'POST', path: '/api/v1/messages', kind: 'drop', after: true });
			const { error } = await runNode(creds, {
				resource: 'message',
				operation: 'send',
				leadId: rl(lead.id),
				body: 'Hello',
			});
			expect(error?.message).toBe(
				'The connection to the Outreach Automation API was closed before an answer arrived',
			);
			expect(sandbox.stats().creates.message).toBe(1);
			expect(sandbox.stats().requests).toBe(1);
		});

		it('a 503 on Create Campaign is not retried either', async () => {
			sandbox.addFault({ method: 'POST', path: '/api/v1/campaigns', status: 503 });
			const { error } = await runNode(creds, {
				resource: 'campaign',
				operation: 'create',
				name: 'N',
				stepsMode: 'builder',
				steps: { step: [{ type: 'connection_request' }] },
			});
			expect(error?.message).toBe('The Outreach Automation service is unavailable (HTTP 503)');
			// The campaigns read first (Use Existing, the default), then the one create, not repeated.
			expect(sandbox.stats().byEndpoint['POST /api/v1/campaigns']).toBe(1);
			expect(sandbox.stats().requests).toBe(2);
		});
	});

	describe('errors', () => {
		it('success: false on a 200 is an error with the server message', async () => {
			sandbox.addFault({ path: '/api/v1/leads', kind: 'false-success' });
			const { error } = await runNode(creds, { resource: 'lead', operation: 'getAll', limit: 5 });
			expect(error?.message).toMatch(/^The Outreach Automation API reported an error: /);
		});

		it('a body that is not the envelope says to check the Base URL', async () => {
			sandbox.addFault({ path: '/api/v1/leads', kind: 'malformed', times: 4 });
			const { error } = await runNode(creds, { resource: 'lead', operation: 'getAll', limit: 5 });
			expect(error?.message).toBe('The answer is not an Outreach Automation API response');
			expect(error?.description).toMatch(/Check the Base URL/);
		});

		it('401: check the API key; the key appears nowhere in the error or the run data', async () => {
			const wrong = { baseUrl: sandbox.url, apiKey: 'wrong-secret-key-9c1d' };
			const { error, run } = await runNode(wrong, {
				resource: 'lead',
				operation: 'getAll',
				limit: 1,
			});
			expect(error?.message).toMatch(
				/refused the API key \(HTTP 401\): check the API key in the credential/,
			);
			const serialized =
				JSON.stringify(run) +
				JSON.stringify(error) +
				String(error?.stack) +
				JSON.stringify(error, Object.getOwnPropertyNames(error));
			expect(serialized).not.toContain('wrong-secret-key-9c1d');
		});

		it('no error path carries the key: 404, 422, 500, network, rate limit', async () => {
			const texts: string[] = [];
			const collect = (r: Awaited<ReturnType<typeof runNode>>) => {
				expect(r.error).toBeDefined();
				texts.push(
					JSON.stringify(r.run),
					JSON.stringify(r.error, Object.getOwnPropertyNames(r.error)),
					String(r.error?.stack),
				);
			};
			collect(
				await runNode(creds, { resource: 'lead', operation: 'get', leadId: rl('ld_missing') }),
			);
			collect(
				await runNode(creds, {
					resource: 'lead',
					operation: 'create',
					firstName: 'x',
					additionalFields: { campaignId: 'cmp_missing' },
				}),
			);
			sandbox.addFault({ method: 'POST', path: '/api/v1/leads', status: 500 });
			collect(await runNode(creds, { resource: 'lead', operation: 'create', firstName: 'y' }));
			sandbox.addFault({ method: 'POST', path: '/api/v1/leads', kind: 'drop' });
			collect(await runNode(creds, { resource: 'lead', operation: 'create', firstName: 'z' }));
			sandbox.config({ rateLimit: 1, windowMs: 3_600_000 });
			collect(await runNode(creds, { resource: 'lead', operation: 'getAll', limit: 1 }, [{}, {}]));
			expect(texts.join('\n')).not.toContain(KEY);
		});

		it('404 names the resource and the id', async () => {
			const { error } = await runNode(creds, {
				resource: 'campaign',
				operation: 'get',
				campaignId: rl('cmp_nope'),
			});
			expect(error?.message).toBe('Campaign "cmp_nope" was not found');
			expect((error as { httpCode?: string }).httpCode).toBe('404');
		});

		it('Continue On Fail: one error item per bad id, the good ones succeed, in input order', async () => {
			const a = sandbox.store.addLead({ first_name: 'A' });
			const b = sandbox.store.addLead({ first_name: 'B' });
			const { items, error } = await runNode(
				creds,
				{ resource: 'lead', operation: 'get', leadId: rl('={{ $json.id }}') },
				[{ id: a.id }, { id: 'ld_missing' }, { id: b.id }, { id: '' }],
				{ continueOnFail: true },
			);
			expect(error).toBeUndefined();
			expect(items).toHaveLength(4);
			expect(items[0].json.id).toBe(a.id);
			expect(items[1].error?.message).toBe('Lead "ld_missing" was not found');
			expect(items[2].json.id).toBe(b.id);
			expect(items[3].error?.message).toBe('Lead ID is empty');
		});
	});
});

describe("the node's Request Options", () => {
	it('a Timeout set under Request Options applies to the request', async () => {
		const sandbox = await startSandbox({
			apiKeys: [KEY],
			seed: { leads: 1, campaigns: 0, messages: 0 },
			latencyMs: 1500,
		});
		try {
			const { error } = await runNode(
				{ baseUrl: sandbox.url, apiKey: KEY },
				{
					resource: 'lead',
					operation: 'create',
					firstName: 'Slow',
					requestOptions: { timeout: 200 },
				},
			);
			expect(error?.message).toBe(
				'The Outreach Automation API did not answer within 200 ms (Request Options > Timeout)',
			);
			expect(error?.description).toMatch(/\(ECONNABORTED\)/);
		} finally {
			await sandbox.stop();
		}
	});
});
