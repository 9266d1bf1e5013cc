import type { IDataObject, INodeProperties } from 'n8n-workflow';
import type { ItemParameters } from '../shared/parameters';

import { filtersCollection } from '../shared/filters';
import { locator } from '../shared/locator';
import { messageFilterOptions, messageFilterQuery } from '../shared/messageFilters';
import { invalid, param, requiredId } from '../shared/parameters';
import { defineResource } from './table';

function sendBody(ctx: ItemParameters): IDataObject {
	const leadId = requiredId(ctx, 'leadId', 'Lead');
	const body = param<unknown>(ctx, 'body', '');
	if (typeof body !== 'string' || !body.trim())
		invalid(ctx, 'Body is empty', 'Write the text of the message.');
	return { lead_id: leadId, body };
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
				'Sends a real message with the given text to the lead with the given ID. Returns the message as JSON, with its ID and status. Side effect: the lead receives the message; calling it twice sends it twice.',
			method: 'POST',
			path: '/messages',
			body: sendBody,
			safeToRepeat: false,
			fields: [recipient, bodyField],
		},
	],
});
