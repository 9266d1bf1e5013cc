/**
 * The workflows the end-to-end tests import into n8n. Each action case is "Webhook -> Outreach Automation"
 * (published, response mode "last node, all entries"): one HTTP call runs it in n8n's production path and
 * answers with the node's output items. Node parameters read their inputs from the webhook body with
 * expressions, so one workflow serves several calls.
 */

import { randomUUID } from 'node:crypto';

import { CREDENTIAL_TYPE, NODE_TYPES } from '../n8n/runtime';
import {
	ACTION_NODE,
	byId,
	expr,
	type NodeJson,
	outreachNode as outreachNodeWith,
	type Parameters,
	TRIGGER_NODE,
	webhookNode,
	workflow,
	type WorkflowJson,
} from '../n8n/workflow-json';

/** The credential the examples reference too (by this id and name). */
export const CREDENTIAL = {
	id: 'OutreachAccount1',
	name: 'Outreach Automation account',
} as const;

export { ACTION_NODE, byId, expr, TRIGGER_NODE };
export type { Parameters, WorkflowJson };

const outreachNode = (
	parameters: Parameters,
	position: [number, number],
	extra: Partial<NodeJson> = {},
) => outreachNodeWith(CREDENTIAL, parameters, position, extra);

export interface ActionCase {
	/** Workflow id (short, alphanumeric). */
	id: string;
	/** Webhook path: POST /webhook/<path>. */
	path: string;
	workflow: WorkflowJson;
}

/** Webhook -> Outreach Automation(parameters). */
function actionCase(
	id: string,
	path: string,
	parameters: Parameters,
	extra: Partial<NodeJson> = {},
): ActionCase {
	return {
		id,
		path,
		workflow: workflow(id, `e2e: ${path}`, [
			webhookNode(path),
			outreachNode(parameters, [220, 0], extra),
		]),
	};
}

/**
 * Webhook -> Split Out(body.items) -> Outreach Automation(parameters), by default with Continue On Fail
 * (`settings` {}: an item's error fails the execution).
 */
function perItemCase(
	id: string,
	path: string,
	parameters: Parameters,
	settings: Partial<NodeJson> = { onError: 'continueRegularOutput' },
): ActionCase {
	const split: NodeJson = {
		id: randomUUID(),
		name: 'Split Out',
		type: 'n8n-nodes-base.splitOut',
		typeVersion: 1,
		position: [220, 0],
		parameters: { fieldToSplitOut: 'body.items', options: {} },
	};
	const nodes = [webhookNode(path), split, outreachNode(parameters, [440, 0], settings)];
	return { id, path, workflow: workflow(id, `e2e: ${path}`, nodes) };
}

const body = (field: string) => expr(`$json.body.${field}`);

/** Every operation of the action node, keyed by a short name the tests use. */
export const CASES = {
	leadCreate: actionCase('e2eLeadCreate', 'lead-create', {
		resource: 'lead',
		operation: 'create',
		firstName: body('firstName'),
		lastName: body('lastName'),
		company: body('company'),
		title: body('title'),
		linkedinUrl: body('linkedinUrl'),
		additionalFields: {
			leadListId: body('leadListId'),
			customFields: { field: [{ name: 'source', value: body('source') }] },
		},
	}),
	leadGet: actionCase('e2eLeadGet', 'lead-get', {
		resource: 'lead',
		operation: 'get',
		leadId: byId('$json.body.leadId'),
	}),
	leadGetAll: actionCase('e2eLeadGetAll', 'lead-get-all', {
		resource: 'lead',
		operation: 'getAll',
		returnAll: true,
		filters: {},
	}),
	leadGetSome: actionCase('e2eLeadGetSome', 'lead-get-some', {
		resource: 'lead',
		operation: 'getAll',
		returnAll: false,
		limit: body('limit'),
		filters: { search: body('search'), campaignId: byId('$json.body.campaignId') },
	}),
	leadUpdate: actionCase('e2eLeadUpdate', 'lead-update', {
		resource: 'lead',
		operation: 'update',
		leadId: byId('$json.body.leadId'),
		updateFields: {
			title: body('title'),
			customFields: { field: [{ name: 'stage', value: body('stage') }] },
		},
	}),
	leadDelete: actionCase('e2eLeadDelete', 'lead-delete', {
		resource: 'lead',
		operation: 'delete',
		leadId: byId('$json.body.leadId'),
	}),

	campaignCreate: actionCase('e2eCampaignCreate', 'campaign-create', {
		resource: 'campaign',
		operation: 'create',
		name: body('name'),
		campaignType: 'connection_message',
		leadListId: body('leadListId'),
		stepsMode: 'builder',
		steps: {
			step: [
				// Not an expression: {{firstName}} must reach the service literally, for it to fill in.
				{ type: 'connection_request', note: 'Hi {{firstName}}, great to meet you at the summit.' },
				{ type: 'message', delayDays: 2, body: 'Thanks for connecting, {{firstName}}!' },
			],
		},
	}),
	campaignCreateJson: actionCase('e2eCampaignCreateJson', 'campaign-create-json', {
		resource: 'campaign',
		operation: 'create',
		name: body('name'),
		campaignType: '__custom',
		customType: 'inmail_sequence',
		stepsMode: 'json',
		stepsJson: JSON.stringify([
			{
				type: 'inmail',
				subject: 'Quick question',
				body: 'Hi {{firstName}}, do you have a minute?',
			},
			{ type: 'message', delay_days: 3, body: 'Following up on my InMail.' },
		]),
	}),
	campaignGet: actionCase('e2eCampaignGet', 'campaign-get', {
		resource: 'campaign',
		operation: 'get',
		campaignId: byId('$json.body.campaignId'),
	}),
	campaignGetAll: actionCase('e2eCampaignGetAll', 'campaign-get-all', {
		resource: 'campaign',
		operation: 'getAll',
		returnAll: true,
	}),
	campaignGetSome: actionCase('e2eCampaignGetSome', 'campaign-get-some', {
		resource: 'campaign',
		operation: 'getAll',
		returnAll: false,
		limit: body('limit'),
	}),
	campaignStart: actionCase('e2eCampaignStart', 'campaign-start', {
		resource: 'campaign',
		operation: 'start',
		campaignId: byId('$json.body.campaignId'),
	}),
	campaignPause: actionCase('e2eCampaignPause', 'campaign-pause', {
		resource: 'campaign',
		operation: 'pause',
		campaignId: byId('$json.body.campaignId'),
	}),
	campaignAnalytics: actionCase('e2eCampaignAnalytics', 'campaign-analytics', {
		resource: 'campaign',
		operation: 'getAnalytics',
		campaignId: byId('$json.body.campaignId'),
	}),

	messageSend: actionCase('e2eMessageSend', 'message-send', {
		resource: 'message',
		operation: 'send',
		leadId: byId('$json.body.leadId'),
		body: body('text'),
	}),
	messageGet: actionCase('e2eMessageGet', 'message-get', {
		resource: 'message',
		operation: 'get',
		messageId: body('messageId'),
	}),
	messageGetAll: actionCase('e2eMessageGetAll', 'message-get-all', {
		resource: 'message',
		operation: 'getAll',
		returnAll: true,
		filters: {
			leadId: byId('$json.body.leadId'),
			campaignId: byId('$json.body.campaignId'),
			status: body('status'),
		},
	}),
	messageGetSome: actionCase('e2eMessageGetSome', 'message-get-some', {
		resource: 'message',
		operation: 'getAll',
		returnAll: false,
		limit: body('limit'),
		filters: {},
	}),

	// One item per entry of body.items (a profile each); no Continue On Fail: one failed create fails the
	// execution, for n8n's Retry.
	leadUpsertBatch: perItemCase(
		'e2eLeadUpsertBatch',
		'lead-upsert-batch',
		{
			resource: 'lead',
			operation: 'upsert',
			linkedinUrl: expr('$json.url'),
			firstName: expr('$json.first'),
		},
		{},
	),
	// Continue On Fail: one item per entry of body.items, a failing item becomes an error item.
	leadGetEach: perItemCase('e2eLeadGetEach', 'lead-get-each', {
		resource: 'lead',
		operation: 'get',
		leadId: byId('$json.leadId'),
	}),
	messageSendEach: perItemCase('e2eMessageSendEach', 'message-send-each', {
		resource: 'message',
		operation: 'send',
		leadId: byId('$json.leadId'),
		body: expr('$json.text'),
	}),
} satisfies Record<string, ActionCase>;

export const TRIGGER_WORKFLOW_ID = 'e2eTriggerReply';

/** The trigger on one lead's messages (and `status`, if given), polled at these seconds of every minute. */
function triggerNode(leadId: string, seconds: number[], status?: string): NodeJson {
	return {
		id: randomUUID(),
		name: TRIGGER_NODE,
		type: NODE_TYPES.trigger,
		typeVersion: 1,
		position: [0, 0],
		parameters: {
			pollTimes: {
				item: seconds.map((second) => ({ mode: 'custom', cronExpression: `${second} * * * * *` })),
			},
			filters: { leadId: { __rl: true, mode: 'id', value: leadId }, ...(status ? { status } : {}) },
			options: {},
		},
		credentials: { [CREDENTIAL_TYPE]: { ...CREDENTIAL } },
	};
}

/**
 * Outreach Automation Trigger (replies of one lead) -> Outreach Automation (lead update: the reply's id
 * written into a custom field). Every delivery shows in the sandbox as one PATCH of that lead.
 *
 * Poll times: four fixed seconds of every minute. Each entry is minute-granular, so n8n accepts it, and
 * together they poll every 15 s, which keeps the test short (one entry "every minute" works the same,
 * four times slower).
 */
export function triggerWorkflow(leadId: string): WorkflowJson {
	const trigger = triggerNode(leadId, [0, 15, 30, 45], 'received');
	const update = outreachNode(
		{
			resource: 'lead',
			operation: 'update',
			leadId: byId('$json.lead_id'),
			updateFields: {
				customFields: { field: [{ name: 'last_reply_id', value: expr('$json.id') }] },
			},
		},
		[220, 0],
		{ name: 'Mark Lead Replied' },
	);
	return workflow(TRIGGER_WORKFLOW_ID, 'e2e: trigger on reply', [trigger, update]);
}

export const BACKLOG_WORKFLOW_ID = 'e2eTriggerBacklog';

/**
 * The trigger alone on one lead's messages, polled every 5 s: further apart than a poll with a 2 s
 * budget lasts (n8n 2.x's durable scheduler would otherwise run two polls of it at once). Published only
 * by the backlog test.
 */
export function backlogTriggerWorkflow(leadId: string): WorkflowJson {
	const everyFiveSeconds = Array.from({ length: 12 }, (_, i) => i * 5);
	return workflow(BACKLOG_WORKFLOW_ID, 'e2e: trigger drains a backlog', [
		triggerNode(leadId, everyFiveSeconds),
	]);
}
