import type { IDataObject, INodeProperties } from 'n8n-workflow';
import type { ItemParameters } from '../shared/parameters';

import { filtersCollection, optionsCollection } from '../shared/filters';
import { locator } from '../shared/locator';
import { messageFilterOptions, messageFilterQuery } from '../shared/messageFilters';
import { invalid, param, requiredId } from '../shared/parameters';
import { defineResource, type ItemRun } from './table';

function sendBody(ctx: ItemParameters): IDataObject {
	const leadId = requiredId(ctx, 'leadId', 'Lead');
	const body = param<unknown>(ctx, 'body', '');
	if (typeof body !== 'string' || !body.trim())
		invalid(ctx, 'Body is empty', 'Write the text of the message.');
	return { lead_id: leadId, body };
}

/** Statuses of a message that did not reach the lead: such a message does not count as sent. */
const FAILED_STATUSES = new Set(['failed', 'error', 'bounced', 'rejected', 'undelivered']);

/** Whether `message` is an earlier send of `body` to `leadId` that did not fail. */
function alreadySent(message: IDataObject, leadId: string, body: string): boolean {
	if (message.lead_id !== undefined && String(message.lead_id) !== leadId) return false;
	if (message.direction === 'inbound') return false;
	if (typeof message.body !== 'string' || message.body.trim() !== body) return false;
	return !FAILED_STATUSES.has(String(message.status ?? '').toLowerCase());
}

/**
 * Send, with Options > Skip If Already Sent: reads the lead's messages first (its pages, then at most
 * the send) and outputs the earlier message instead of sending the same text again. Items of one run
 * with the same lead and text go one after the other, so the second sees the first's message.
 */
async function send(item: ItemRun): Promise<IDataObject[]> {
	const options = param<IDataObject>(item.parameters, 'options', {});
	if (options.skipIfAlreadySent !== true) return await item.send();
	const body = sendBody(item.parameters);
	const leadId = String(body.lead_id);
	const text = String(body.body).trim();
	return await item.exclusive(`${leadId}\n${text}`, async () => {
		const messages = await item.readAll('/messages', { lead_id: leadId });
		const earlier = messages.find((message) => alreadySent(message, leadId, text));
		if (earlier) return [{ ...earlier, outcome: 'skipped' }];
		const sent = await item.send({ body });
		return sent.map((message) => ({ ...message, outcome: 'sent' }));
	});
}

function listQuery(ctx: ItemParameters): IDataObject {
	return messageFilterQuery(param<IDataObject>(ctx, 'filters', {}));
}

const recipient: INodeProperties = locator({
	name: 'leadId',
	displayName: 'Lead',
	kind: 'lead',
	required: true,
	description: 'The lead who receives the message. Choose from the list, or specify an ID.',
});

const bodyField: INodeProperties = {
	displayName: 'Body',
	name: 'body',
	type: 'string',
	required: true,
	default: '',
	typeOptions: { rows: 4 },
	placeholder: 'e.g. Thanks for connecting, Ada!',
	description: 'Text of the message',
};

const messageIdField: INodeProperties = {
	displayName: 'Message ID',
	name: 'messageId',
	type: 'string',
	required: true,
	default: '',
	placeholder: 'e.g. msg_1a2b3c',
};

const sendOptions = optionsCollection([
	{
		displayName: 'Skip If Already Sent',
		name: 'skipIfAlreadySent',
		type: 'boolean',
		default: false,
		description:
			'Whether to read the lead\'s messages first and not send when one with the same text (spaces around it aside) was sent before and did not fail. The output then is that message, with outcome "skipped" ("sent" otherwise). Costs one request per page of the lead\'s messages.',
	},
]);

const listFilters = filtersCollection(messageFilterOptions('replied'));

export const message = defineResource({
	value: 'message',
	name: 'Message',
	defaultOperation: 'send',
	operations: [
		{
			name: 'Get',
			value: 'get',
			action: 'Get a message',
			description: 'Get a message by ID',
			toolDescription:
				'Looks up one message by its ID. Returns it as JSON: text, direction (outbound or inbound), status, lead ID and campaign ID. Read-only.',
			method: 'GET',
			path: '/messages/{id}',
			id: { parameter: 'messageId', label: 'Message ID' },
			safeToRepeat: true,
			fields: [messageIdField],
		},
		{
			name: 'Get Many',
			value: 'getAll',
			action: 'Get many messages',
			description: 'List messages, optionally filtered by lead, campaign or status',
			toolDescription:
				'Lists messages, newest first, optionally only those of one lead, one campaign or one status (e.g. replied). Returns one JSON object per message, at most Limit of them (10 unless set otherwise). Read-only.',
			method: 'GET',
			path: '/messages',
			query: listQuery,
			list: true,
			safeToRepeat: true,
			fields: [listFilters],
		},
		{
			name: 'Send',
			value: 'send',
			action: 'Send a message',
			description: 'Send a message to a lead',
			toolDescription:
				'Sends a real message with the given text to the lead with the given ID. Returns the message as JSON, with its ID and status. Side effect: the lead receives the message; calling it twice sends it twice, unless Skip If Already Sent is on (then the earlier message is returned with outcome "skipped").',
			method: 'POST',
			path: '/messages',
			body: sendBody,
			safeToRepeat: false,
			fields: [recipient, bodyField, sendOptions],
			run: send,
		},
	],
});
