/**
 * n8n's own Retry, in a real n8n: a Send with Skip If Already Sent over 50 items, the 31st send stored by the
 * service and then answered 500, so the execution fails; Retry (the REST call the executions list makes) runs
 * the failed node again with all 50 input items: the option must make it send nothing twice. And a service
 * that stores bodies with line ends and spaces normalised: the same workflow run twice sends each once.
 */
import { randomUUID } from 'node:crypto';

import { CREDENTIAL, byId, expr, type WorkflowJson } from './workflows';
import { outreachNode, webhookNode, workflow } from '../n8n/workflow-json';
import { serve, startLightWorld, stopLightWorld, type LightWorld } from './light-world';

const TAG = 'reruns';
const SEND_WORKFLOW_ID = 'e2eRerunSend';
const SEND_PATH = 'rerun-send-skip';

/** Webhook -> Split Out(body.items) -> Send (Skip If Already Sent), without Continue On Fail. */
const sendWorkflow: WorkflowJson = workflow(SEND_WORKFLOW_ID, 'e2e: re-run a failed send', [
	webhookNode(SEND_PATH),
	{
		id: randomUUID(),
		name: 'Split Out',
		type: 'n8n-nodes-base.splitOut',
		typeVersion: 1,
		position: [220, 0],
		parameters: { fieldToSplitOut: 'body.items', options: {} },
	},
	outreachNode(
		CREDENTIAL,
		{
			resource: 'message',
			operation: 'send',
			leadId: byId('$json.lead'),
			body: expr('$json.text'),
			options: { skipIfAlreadySent: true },
		},
		[440, 0],
	),
]);

interface Execution {
	id: string;
	status: string;
	mode: string;
	retryOf?: string | null;
	data?: {
		resultData: {
			error?: { message?: string };
			runData: Record<
				string,
				Array<{ data?: { main: Array<Array<{ json: Record<string, unknown> }>> } }>
			>;
		};
	};
}

let world: LightWorld | undefined;

beforeAll(async () => {
	world = await startLightWorld(TAG, [sendWorkflow]);
	await serve(world, [SEND_WORKFLOW_ID]);
}, 30 * 60_000);

afterAll(async () => {
	const failed = Boolean((globalThis as { __outreachE2eFailures?: number }).__outreachE2eFailures);
	await stopLightWorld(TAG, world, failed);
}, 60_000);

async function executions(): Promise<Execution[]> {
	const { data } = await world!.n8n.publicApi<{ data: Execution[] }>(
		world!.apiKey!,
		'GET',
		`/executions?workflowId=${SEND_WORKFLOW_ID}&includeData=true&limit=100`,
	);
	return data;
}

test("Send with Skip If Already Sent, 50 items, the 31st stored then 500: the execution fails; n8n's Retry sends 0 twice, each of the 50 once", async () => {
	const { sandbox, n8n } = world!;
	const leads = Array.from(
		{ length: 50 },
		(_, i) => sandbox.store.addLead({ first_name: `R${i}` }).id,
	);
	const items = leads.map((lead, i) => ({ lead, text: `Hello R${i}, thanks for connecting` }));
	sandbox.addFault({
		method: 'POST',
		path: '/api/v1/messages',
		status: 500,
		after: true,
		skip: 30,
	});

	const answer = await n8n.callWebhook(SEND_PATH, { items });
	expect(answer.status).toBe(500);
	const [failed] = await executions();
	expect(failed).toMatchObject({ status: 'error' });
	expect(failed.data?.resultData.error?.message).toMatch(/HTTP 500/);
	// The service stored all 50 (the 31st before answering 500): the failure lost no send, and made none twice.
	expect(sandbox.stats().creates.message).toBe(50);
	const since = sandbox.requests().length;

	// What the executions list's "Retry with original workflow" sends.
	const retried = await n8n.rest<{ id: string; status: string }>(
		'POST',
		`/executions/${failed.id}/retry`,
		{ loadWorkflow: false },
	);
	const retry = (await executions()).find((e) => e.id === String(retried.id))!;
	expect(retry).toMatchObject({ status: 'success', mode: 'retry', retryOf: failed.id });
	// n8n ran the failed node again with its whole input: all 50 items, each found already sent.
	const output = retry.data!.resultData.runData['Outreach Automation'].at(-1)!.data!.main[0];
	expect(output.map((item) => item.json.outcome)).toEqual(Array(50).fill('skipped'));
	const log = sandbox.requests().slice(since);
	expect(log.map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual(
		Array(50).fill('GET /api/v1/messages 200'),
	);
	for (const lead of leads) expect(sandbox.store.findMessages({ lead_id: lead })).toHaveLength(1);
	expect(sandbox.stats().creates.message).toBe(50);
	expect(sandbox.stats().duplicateCreates).toBe(0);
});

test('Send with Skip If Already Sent on a service that normalises white space: 5 leads, run twice, 5 messages, 0 sent the second time', async () => {
	const { sandbox, n8n } = world!;
	sandbox.reset({ leads: 0, campaigns: 0, messages: 0 });
	sandbox.config({ messageBodies: 'normalized' });
	const leads = Array.from(
		{ length: 5 },
		(_, i) => sandbox.store.addLead({ first_name: `N${i}` }).id,
	);
	const items = leads.map((lead) => ({ lead, text: 'Hi there,\r\n\r\nGreat  to meet you.' }));
	const first = await n8n.callWebhook(SEND_PATH, { items });
	expect(first.status).toBe(200);
	expect(sandbox.stats().creates.message).toBe(5);
	const since = sandbox.requests().length;
	const second = await n8n.callWebhook(SEND_PATH, { items });
	expect(second.status).toBe(200);
	const [latest] = await executions();
	const output = latest.data!.resultData.runData['Outreach Automation'].at(-1)!.data!.main[0];
	expect(output.map((item) => item.json.outcome)).toEqual(Array(5).fill('skipped'));
	expect(
		sandbox
			.requests()
			.slice(since)
			.filter((r) => r.method === 'POST'),
	).toHaveLength(0);
	expect(sandbox.stats().creates.message).toBe(5);
	sandbox.config({ messageBodies: 'as-sent' });
});
