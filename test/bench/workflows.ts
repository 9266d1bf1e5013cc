/**
 * The workflows the benchmark imports into n8n. Every action scenario starts with a Webhook node (response
 * mode "last node, all entries"): one HTTP call runs it in n8n's production path and answers with the last
 * node's items, so the bench sees exactly what a user's next node would get.
 *
 * Scenario 5 is the same job as scenario 1 done the way a user would without this package: n8n's own HTTP
 * Request node with its built-in pagination (a page number parameter incremented per request, complete when a
 * page comes back short or empty, per_page=100) and a Split Out of `data`.
 */
import { randomUUID } from 'node:crypto';

import { CREDENTIAL_TYPE, NODE_TYPES } from '../n8n/runtime';
import {
	ACTION_NODE,
	expr,
	type NodeJson,
	outreachNode as outreachNodeWith,
	type Parameters,
	TRIGGER_NODE,
	webhookNode,
	workflow,
	type WorkflowJson,
} from '../n8n/workflow-json';

/** The package's credential (baseUrl + apiKey of the sandbox). */
export const CREDENTIAL = {
	id: 'BenchOutreachCred1',
	name: 'Outreach Automation (bench sandbox)',
} as const;
/** n8n's generic Header Auth credential the HTTP Request node uses: Authorization: Bearer <key>. */
export const HEADER_CREDENTIAL = {
	id: 'BenchHeaderAuthCred',
	name: 'Outreach API bearer (bench sandbox)',
} as const;

export { ACTION_NODE, TRIGGER_NODE };
export type { WorkflowJson };

function splitOut(field: string, position: [number, number]): NodeJson {
	return {
		id: randomUUID(),
		name: 'Split Out',
		type: 'n8n-nodes-base.splitOut',
		typeVersion: 1,
		position,
		parameters: { fieldToSplitOut: field, options: {} },
	};
}

const outreachNode = (
	parameters: Parameters,
	position: [number, number],
	extra: Partial<NodeJson> = {},
) => outreachNodeWith(CREDENTIAL, parameters, position, extra);

export interface BenchCase {
	id: string;
	/** POST /webhook/<path> runs it. */
	path: string;
	workflow: WorkflowJson;
}

function webhookCase(id: string, path: string, nodes: NodeJson[]): BenchCase {
	return { id, path, workflow: workflow(id, `bench: ${path}`, [webhookNode(path), ...nodes]) };
}

/** How the HTTP Request variants of scenario 5 differ. */
export interface HttpVariant {
	retryOnFail: boolean;
	/** Pagination "Interval Between Requests (ms)"; 0 is n8n's default. */
	requestIntervalMs: number;
	/**
	 * The completion expression. `$response.body.data.length < 100` is what a user writes; on a 429 answer
	 * `data` is missing, the expression throws, n8n's expression engine turns that into null, and pagination
	 * stops there without an error. `$response.body.data?.length < 100` is false on a 429, so n8n goes on to
	 * raise the 429 as the node's error, which Retry On Fail can then retry.
	 */
	nullSafe: boolean;
}

/**
 * Webhook -> HTTP Request (GET /api/v1/leads?per_page=100, page = $pageCount + 1, complete when the page is
 * shorter than 100) -> Split Out(data). Retry On Fail uses n8n's defaults once switched on: 3 tries, 1000 ms.
 */
function httpRequestCase(
	id: string,
	path: string,
	baseUrl: string,
	variant: HttpVariant,
): BenchCase {
	const http: NodeJson = {
		id: randomUUID(),
		name: 'HTTP Request',
		type: 'n8n-nodes-base.httpRequest',
		typeVersion: 4.2,
		position: [220, 0],
		parameters: {
			method: 'GET',
			url: `${baseUrl}/api/v1/leads`,
			authentication: 'genericCredentialType',
			genericAuthType: 'httpHeaderAuth',
			sendQuery: true,
			specifyQuery: 'keypair',
			queryParameters: { parameters: [{ name: 'per_page', value: '100' }] },
			options: {
				pagination: {
					pagination: {
						paginationMode: 'updateAParameterInEachRequest',
						parameters: {
							parameters: [{ type: 'qs', name: 'page', value: expr('$pageCount + 1') }],
						},
						paginationCompleteWhen: 'other',
						completeExpression: expr(
							`$response.body.data${variant.nullSafe ? '?.' : '.'}length < 100`,
						),
						limitPagesFetched: false,
						requestInterval: variant.requestIntervalMs,
					},
				},
			},
		},
		credentials: { httpHeaderAuth: { ...HEADER_CREDENTIAL } },
		...(variant.retryOnFail ? { retryOnFail: true, maxTries: 3, waitBetweenTries: 1000 } : {}),
	};
	return webhookCase(id, path, [http, splitOut('data', [440, 0])]);
}

/** Every webhook-started workflow of the bench; `baseUrl` is the sandbox's (the HTTP Request node has no credential for it). */
export function benchCases(baseUrl: string, intervalMs: number) {
	return {
		getAll: webhookCase('benchLeadGetAll', 'bench-lead-get-all', [
			outreachNode(
				{ resource: 'lead', operation: 'getAll', returnAll: true, filters: {} },
				[220, 0],
			),
		]),
		// Per-item cases: Continue On Fail, so one failed item shows as an error item instead of hiding the rest.
		create: webhookCase('benchLeadCreate', 'bench-lead-create', [
			splitOut('body.items', [220, 0]),
			outreachNode(
				{
					resource: 'lead',
					operation: 'create',
					firstName: expr('$json.first'),
					lastName: expr('$json.last'),
				},
				[440, 0],
				{ onError: 'continueRegularOutput' },
			),
		]),
		upsert: webhookCase('benchLeadUpsert', 'bench-lead-upsert', [
			splitOut('body.items', [220, 0]),
			outreachNode(
				{
					resource: 'lead',
					operation: 'upsert',
					linkedinUrl: expr('$json.url'),
					firstName: expr('$json.first'),
					lastName: expr('$json.last'),
					company: expr('$json.company'),
					title: expr('$json.title'),
				},
				[440, 0],
				{ onError: 'continueRegularOutput' },
			),
		]),
		get: webhookCase('benchLeadGet', 'bench-lead-get', [
			splitOut('body.items', [220, 0]),
			outreachNode(
				{
					resource: 'lead',
					operation: 'get',
					leadId: { __rl: true, mode: 'id', value: expr('$json.id') },
				},
				[440, 0],
				{ onError: 'continueRegularOutput' },
			),
		]),
		httpPlain: httpRequestCase('benchHttpPlain', 'bench-http-plain', baseUrl, {
			retryOnFail: false,
			requestIntervalMs: 0,
			nullSafe: false,
		}),
		httpRetry: httpRequestCase('benchHttpRetry', 'bench-http-retry', baseUrl, {
			retryOnFail: true,
			requestIntervalMs: 0,
			nullSafe: false,
		}),
		httpInterval: httpRequestCase('benchHttpInterval', 'bench-http-interval', baseUrl, {
			retryOnFail: false,
			requestIntervalMs: intervalMs,
			nullSafe: false,
		}),
		httpRetrySafe: httpRequestCase('benchHttpRetrySafe', 'bench-http-retry-safe', baseUrl, {
			retryOnFail: true,
			requestIntervalMs: 0,
			nullSafe: true,
		}),
	} satisfies Record<string, BenchCase>;
}

export type BenchCases = ReturnType<typeof benchCases>;

export const TRIGGER_WORKFLOW_ID = 'benchTriggerPoll';

/**
 * Outreach Automation Trigger alone (no filters). Poll Times: one entry per fixed second, every `everySeconds`
 * s. n8n refuses a sub-minute cron, but every entry here is minute-granular, so it accepts the list: the polls
 * are n8n's own scheduled polls, just closer together than "every minute".
 */
export function triggerWorkflow(everySeconds: number): WorkflowJson {
	const seconds = Array.from({ length: Math.floor(60 / everySeconds) }, (_, i) => i * everySeconds);
	const trigger: NodeJson = {
		id: randomUUID(),
		name: TRIGGER_NODE,
		type: NODE_TYPES.trigger,
		typeVersion: 1,
		position: [0, 0],
		parameters: {
			pollTimes: {
				item: seconds.map((second) => ({ mode: 'custom', cronExpression: `${second} * * * * *` })),
			},
			filters: {},
			options: {},
		},
		credentials: { [CREDENTIAL_TYPE]: { ...CREDENTIAL } },
	};
	return workflow(TRIGGER_WORKFLOW_ID, 'bench: trigger polls', [trigger]);
}
