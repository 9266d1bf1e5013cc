import type {
	IDataObject,
	IExecuteSingleFunctions,
	IHttpRequestOptions,
	INodeProperties,
} from 'n8n-workflow';

import {
	idPath,
	invalid,
	locator,
	messageFilterOptions,
	messageFilterQuery,
	param,
	type RequestBuilders,
	returnAllAndLimit,
	routed,
	showFor,
} from '../shared/fields';

async function sendBody(this: IExecuteSingleFunctions, requestOptions: IHttpRequestOptions) {
	const leadId = String(param<unknown>(this, 'leadId', '') ?? '').trim();
	if (!leadId) invalid(this, 'Lead is empty', 'Pick the lead to write to, or paste its ID.');
	const body = param<unknown>(this, 'body', '');
	if (typeof body !== 'string' || !body.trim()) invalid(this, 'Body is empty', 'Write the text of the message.');
	requestOptions.body = { lead_id: leadId, body };
	return requestOptions;
}

async function listQuery(this: IExecuteSingleFunctions, requestOptions: IHttpRequestOptions) {
	requestOptions.qs = messageFilterQuery(param<IDataObject>(this, 'filters', {}));
	return requestOptions;
}

export const messageBuilders: RequestBuilders = {
	get: [idPath('/messages/{id}', 'messageId', 'Message ID')],
	getAll: [listQuery],
	send: [sendBody],
};

export const messageOperations: INodeProperties = {
	displayName: 'Operation',
	name: 'operation',
	type: 'options',
	noDataExpression: true,
	displayOptions: { show: { resource: ['message'] } },
	options: [
		{
			name: 'Get',
			value: 'get',
			action: 'Get a message',
			description: 'Get a message by ID',
			routing: routed('GET'),
		},
		{
			name: 'Get Many',
			value: 'getAll',
			action: 'Get many messages',
			description: 'List messages, optionally filtered by lead, campaign or status',
			routing: routed('GET', '/messages'),
		},
		{
			name: 'Send',
			value: 'send',
			action: 'Send a message',
			description: 'Send a message to a lead',
			routing: routed('POST', '/messages'),
		},
	],
	default: 'send',
};

export const messageProperties: INodeProperties[] = [
	locator({
		name: 'leadId',
		displayName: 'Lead',
		kind: 'lead',
		required: true,
		description: 'The lead who receives the message. Choose from the list, or specify an ID.',
		displayOptions: showFor('message', ['send']),
	}),
	{
		displayName: 'Body',
		name: 'body',
		type: 'string',
		required: true,
		default: '',
		typeOptions: { rows: 4 },
		placeholder: 'e.g. Thanks for connecting, Ada!',
		description: 'Text of the message',
		displayOptions: showFor('message', ['send']),
	},
	{
		displayName: 'Message ID',
		name: 'messageId',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'e.g. msg_1a2b3c',
		displayOptions: showFor('message', ['get']),
	},
	...returnAllAndLimit('message'),
	{
		displayName: 'Filters',
		name: 'filters',
		type: 'collection',
		placeholder: 'Add Filter',
		default: {},
		displayOptions: showFor('message', ['getAll']),
		options: messageFilterOptions('replied'),
	},
];
