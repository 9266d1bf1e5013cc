/**
 * The execution hint after a run that waited for the rate limit, as n8n's engine records it with the
 * node's output (and nothing after a run that did not wait).
 */
import type { IRun } from 'n8n-workflow';

import { resetRateLimitState } from '../../../../nodes/OutreachAutomation/transport/pacing';
import { duration } from '../../../../nodes/OutreachAutomation/transport/report';
import { runNode } from '../../../engine/harness';
import { startSandbox, type Sandbox } from '../../../sandbox/server';

const KEY = 'report-secret-key-4e7a1c';
const CREATE = { resource: 'lead', operation: 'create', firstName: '={{ "Lead " + $json.i }}' };
const items = (n: number) => Array.from({ length: n }, (_, i) => ({ i }));
const hintsOf = (run: IRun) =>
	(run.data.resultData.runData['Outreach Automation'][0].hints ?? []).map((hint) => hint.message);

describe('the execution hint after waiting for the rate limit', () => {
	let sandbox: Sandbox;
	beforeAll(async () => {
		sandbox = await startSandbox({ apiKeys: [KEY], seed: { leads: 0, campaigns: 0, messages: 0 } });
	});
	afterAll(async () => sandbox.stop());
	beforeEach(() => {
		resetRateLimitState();
		sandbox.reset({ leads: 0, campaigns: 0, messages: 0 });
	});
	const credentials = () => ({ baseUrl: sandbox.url, apiKey: KEY });

	it('30 creates at 10 a 1-s window: says how long it waited and what set the pace', async () => {
		sandbox.config({ rateLimit: 10, windowMs: 1000, resetFormat: 'epoch-ms' });
		const { run, items: output } = await runNode(credentials(), CREATE, items(30));
		expect(output).toHaveLength(30);
		const hints = hintsOf(run);
		expect(hints).toHaveLength(1);
		expect(hints[0]).toMatch(
			/^Waited \d+(\.\d)? s for the API's rate limit\. Pace set by the API key's limit of 10 requests per window\.$/,
		);
		const waited = Number(/^Waited ([\d.]+) s/.exec(hints[0])![1]);
		// Three windows of work: at least the two ends waited for (less the margin of a busy machine).
		expect(waited).toBeGreaterThanOrEqual(1.5);
	});

	it('a 429 waited out and sent again is counted', async () => {
		sandbox.config({ rateLimit: 100, windowMs: 60_000, resetFormat: 'epoch-ms' });
		sandbox.reset({ leads: 1, campaigns: 0, messages: 0 });
		sandbox.addFault({ method: 'GET', path: '/api/v1/leads/*', status: 429, retryAfter: 1 });
		const id = [...sandbox.store.leads.keys()][0];
		const { run, items: output } = await runNode(credentials(), {
			resource: 'lead',
			operation: 'get',
			leadId: id,
		});
		expect(output[0].json.id).toBe(id);
		// A 429 to the first request of a window says someone else is on the key: the hint says so.
		expect(hintsOf(run)).toEqual([
			expect.stringMatching(
				/^Waited [\d.]+ (ms|s) for the API's rate limit; 1 request was answered 429 \(too many requests\), waited out and sent again\. Pace set by the API key's limit of 100 requests per window(, shared with about 1 other process)?\.$/,
			),
		]);
	});

	it('a reset hours away: the item fails at once (Continue On Fail) and the hint says a request gave up', async () => {
		sandbox.config({ rateLimit: 100, windowMs: 60_000, resetFormat: 'epoch-ms' });
		sandbox.reset({ leads: 1, campaigns: 0, messages: 0 });
		sandbox.addFault({ method: 'GET', path: '/api/v1/leads/*', status: 429, retryAfter: 3 * 3600 });
		const id = [...sandbox.store.leads.keys()][0];
		const { run, items: output } = await runNode(
			credentials(),
			{ resource: 'lead', operation: 'get', leadId: id },
			[{}],
			{ continueOnFail: true },
		);
		expect(String(output[0].json.error)).toMatch(
			/^Rate limit of the Outreach Automation API reached \(HTTP 429\)\. It resets at /,
		);
		expect(hintsOf(run)).toEqual([
			expect.stringMatching(
				/; 1 request gave up: the limit resets later than the node waits \(5 min\)\. Pace set by /,
			),
		]);
	});

	it('a run that never waited has no hint', async () => {
		sandbox.config({ rateLimit: 100, windowMs: 60_000, resetFormat: 'epoch-ms' });
		const { run } = await runNode(credentials(), CREATE, items(5));
		// A 429 to the first request of a window says someone else is on the key: the hint says so.
		expect(hintsOf(run)).toEqual([]);
	});

	it('durations in a user’s words', () => {
		expect([duration(850), duration(4200), duration(185_000), duration(120_000)]).toEqual([
			'850 ms',
			'4.2 s',
			'3 min 5 s',
			'2 min',
		]);
	});
});
