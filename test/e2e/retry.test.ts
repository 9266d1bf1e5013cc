/**
 * n8n's own Retry (the executions list's "Retry": `POST /rest/executions/:id/retry`) runs the failed node
 * again with its whole input, the items that had succeeded included. Lead > Create or Update makes that
 * safe: proven here in a real n8n with the packed package, against the sandbox.
 */
import type { RequestLogEntry } from '../sandbox/server';
import { mark, startWorld, stopWorld, type World } from './harness';
import { ACTION_NODE, CASES } from './workflows';

type Json = Record<string, unknown>;

interface Execution {
	id: string;
	status: string;
	mode: string;
	retryOf?: string | null;
	data?: {
		resultData: { error?: Json; runData: Record<string, Array<{ data?: { main: Json[][] } }>> };
	};
}

let world: World;

beforeAll(async () => {
	world = await startWorld();
}, 30 * 60_000);

afterAll(async () => {
	const failed = Boolean((globalThis as { __outreachE2eFailures?: number }).__outreachE2eFailures);
	await stopWorld(failed);
}, 60_000);

async function executionsOf(workflowId: string): Promise<Execution[]> {
	const { data } = await world.n8n.publicApi<{ data: Execution[] }>(
		world.apiKey,
		'GET',
		`/executions?workflowId=${workflowId}&includeData=true&limit=100`,
	);
	return data;
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
	const deadline = Date.now() + 60_000;
	for (;;) {
		const value = await probe();
		if (value !== undefined) return value;
		if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
		await new Promise((resolve) => setTimeout(resolve, 250));
	}
}

const isWrite = (r: RequestLogEntry) => r.method === 'POST' || r.method === 'PATCH';

describe("Create or Update and n8n's Retry", () => {
	test('50 items, the 31st create stored and answered 500: the execution fails; Retry leaves each of the 50 profiles once', async () => {
		const { sandbox } = world;
		const workflow = CASES.leadUpsertBatch;
		const profile = (i: number) => `https://www.linkedin.com/in/e2e-retry-${i}-profile`;
		const items = Array.from({ length: 50 }, (_, i) => ({ url: profile(i), first: `Retry${i}` }));
		const leadsOf = (url: string) =>
			[...sandbox.store.leads.values()].filter((lead) => lead.linkedin_url === url);
		const createsBefore = sandbox.stats().creates.lead;

		sandbox.addFault({
			method: 'POST',
			path: '/api/v1/leads',
			status: 500,
			after: true,
			skip: 30,
		});
		const failedRun = await world.n8n.callWebhook(workflow.path, { items });
		expect(failedRun.status).toBe(500);
		const failed = await waitFor('the failed execution', async () =>
			(await executionsOf(workflow.id)).find((e) => e.status === 'error'),
		);
		expect(JSON.stringify(failed.data?.resultData.error)).toMatch(/500/);
		// Every create ran, the 31st too (stored, then answered 500).
		expect(sandbox.stats().creates.lead - createsBefore).toBe(50);

		const since = mark(sandbox);
		await world.n8n.rest('POST', `/executions/${failed.id}/retry`, { loadWorkflow: false });
		const retried = await waitFor('the retry to succeed', async () =>
			(await executionsOf(workflow.id)).find((e) => e.id !== failed.id && e.status === 'success'),
		);
		expect(retried.mode).toBe('retry');
		// The node ran again with all 50 items: each found its lead, none written.
		const output = retried.data!.resultData.runData[ACTION_NODE].at(-1)!.data!.main[0];
		expect(output).toHaveLength(50);
		expect(output.map((item) => (item.json as Json).outcome)).toEqual(Array(50).fill('unchanged'));
		const retryRequests = sandbox.requests(since).filter((r) => r.path.startsWith('/api/v1/leads'));
		expect(retryRequests.filter(isWrite)).toEqual([]);
		expect(retryRequests.length).toBeGreaterThan(0);
		expect(sandbox.stats().creates.lead - createsBefore).toBe(50);
		for (let i = 0; i < 50; i++) expect(leadsOf(profile(i))).toHaveLength(1);
	});
});
