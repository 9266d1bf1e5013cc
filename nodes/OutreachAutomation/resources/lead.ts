import type {
	IDataObject,
	IExecuteSingleFunctions,
	IHttpRequestOptions,
	INodeProperties,
} from 'n8n-workflow';

import {
	assignFilled,
	idPath,
	invalid,
	locator,
	param,
	type RequestBuilders,
	returnAllAndLimit,
	routed,
	showFor,
} from '../shared/fields';

/**
 * The service's wire name for the profile address (snake_case like every other field). Change it
 * here only.
 */
const PROFILE_URL_FIELD = 'linkedin_url';

/** The lead's own fields: top-level on Create, inside "Update Fields" on Update. */
const leadFields: INodeProperties[] = [
	{ displayName: 'First Name', name: 'firstName', type: 'string', default: '', placeholder: 'e.g. Ada' },
	{ displayName: 'Last Name', name: 'lastName', type: 'string', default: '', placeholder: 'e.g. Lovelace' },
	{ displayName: 'Company', name: 'company', type: 'string', default: '', placeholder: 'e.g. Analytical Engines Ltd' },
	{ displayName: 'Title', name: 'title', type: 'string', default: '', placeholder: 'e.g. Head of Research' },
	{
		displayName: 'LinkedIn Profile URL',
		name: 'linkedinUrl',
		type: 'string',
		default: '',
		placeholder: 'e.g. https://www.linkedin.com/in/ada-lovelace',
		description: `The lead's profile address, sent as "${PROFILE_URL_FIELD}"`,
	},
];

/** Fields every lead write may add: list membership and any custom key. */
const moreLeadFields: INodeProperties[] = [
	{
		displayName: 'Lead List ID',
		name: 'leadListId',
		type: 'string',
		default: '',
		description: 'The list of leads a campaign can target (see Campaign > Create)',
	},
	{
		displayName: 'Campaign ID',
		name: 'campaignId',
		type: 'string',
		default: '',
		description: 'Adds the lead to this campaign',
	},
	{
		displayName: 'Custom Fields',
		name: 'customFields',
		type: 'fixedCollection',
		placeholder: 'Add Custom Field',
		default: {},
		typeOptions: { multipleValues: true },
		description: 'Any other field the service accepts, sent under the name you give it',
		options: [
			{
				displayName: 'Field',
				name: 'field',
				values: [
					{ displayName: 'Name', name: 'name', type: 'string', default: '', placeholder: 'e.g. email' },
					{ displayName: 'Value', name: 'value', type: 'string', default: '' },
				],
			},
		],
	},
];

const WIRE_NAMES: Record<string, string> = {
	firstName: 'first_name',
	lastName: 'last_name',
	company: 'company',
	title: 'title',
	linkedinUrl: PROFILE_URL_FIELD,
	leadListId: 'lead_list_id',
	campaignId: 'campaign_id',
};

/** Turns the UI's values into the API's body, checking what can be checked before sending. */
function leadBody(ctx: IExecuteSingleFunctions, values: IDataObject): IDataObject {
	const body: IDataObject = {};
	for (const [name, wire] of Object.entries(WIRE_NAMES)) {
		assignFilled(body, { [wire]: values[name] });
	}
	const url = body[PROFILE_URL_FIELD];
	if (typeof url === 'string' && !/^https?:\/\/\S+$/i.test(url)) {
		invalid(ctx, `LinkedIn Profile URL "${url}" is not a web address`, 'Use the full address, starting with https://');
	}
	const custom = ((values.customFields as IDataObject | undefined)?.field ?? []) as IDataObject[];
	for (const [index, entry] of custom.entries()) {
		const name = String(entry.name ?? '').trim();
		if (!name) invalid(ctx, `Custom Fields: field ${index + 1} has no name`);
		if (name in body) invalid(ctx, `Custom Fields: "${name}" is already set by another field`);
		body[name] = entry.value as string;
	}
	return body;
}

async function createBody(this: IExecuteSingleFunctions, requestOptions: IHttpRequestOptions) {
	const values: IDataObject = { ...param<IDataObject>(this, 'additionalFields', {}) };
	for (const field of leadFields) values[field.name] = param(this, field.name, '');
	const body = leadBody(this, values);
	if (!Object.keys(body).length) {
		invalid(this, 'A lead needs at least one field', 'Fill First Name, Last Name or LinkedIn Profile URL.');
	}
	requestOptions.body = body;
	return requestOptions;
}

async function updateBody(this: IExecuteSingleFunctions, requestOptions: IHttpRequestOptions) {
	const body = leadBody(this, param<IDataObject>(this, 'updateFields', {}));
	if (!Object.keys(body).length) {
		invalid(this, 'Update Fields is empty: nothing to update', 'Add at least one field to change.');
	}
	requestOptions.body = body;
	return requestOptions;
}

async function listQuery(this: IExecuteSingleFunctions, requestOptions: IHttpRequestOptions) {
	const filters = param<IDataObject>(this, 'filters', {});
	requestOptions.qs = assignFilled({}, { search: filters.search, campaign_id: filters.campaignId });
	return requestOptions;
}

const leadPath = idPath('/leads/{id}', 'leadId', 'Lead ID');

export const leadBuilders: RequestBuilders = {
	create: [createBody],
	delete: [leadPath],
	get: [leadPath],
	getAll: [listQuery],
	update: [leadPath, updateBody],
};

export const leadOperations: INodeProperties = {
	displayName: 'Operation',
	name: 'operation',
	type: 'options',
	noDataExpression: true,
	displayOptions: { show: { resource: ['lead'] } },
	options: [
		{
			name: 'Create',
			value: 'create',
			action: 'Create a lead',
			description: 'Create a new lead',
			routing: routed('POST', '/leads'),
		},
		{
			name: 'Delete',
			value: 'delete',
			action: 'Delete a lead',
			description: 'Delete a lead',
			routing: routed('DELETE'),
		},
		{
			name: 'Get',
			value: 'get',
			action: 'Get a lead',
			description: 'Get a lead by ID',
			routing: routed('GET'),
		},
		{
			name: 'Get Many',
			value: 'getAll',
			action: 'Get many leads',
			description: 'List leads, optionally filtered by search text or campaign',
			routing: routed('GET', '/leads'),
		},
		{
			name: 'Update',
			value: 'update',
			action: 'Update a lead',
			description: 'Change some fields of a lead, leaving the others as they are',
			routing: routed('PATCH'),
		},
	],
	default: 'create',
};

export const leadProperties: INodeProperties[] = [
	locator({
		name: 'leadId',
		displayName: 'Lead',
		kind: 'lead',
		required: true,
		description: 'The lead to work on. Choose from the list, or specify an ID.',
		displayOptions: showFor('lead', ['get', 'update', 'delete']),
	}),
	...leadFields.map((field) => ({ ...field, displayOptions: showFor('lead', ['create']) })),
	{
		displayName: 'Additional Fields',
		name: 'additionalFields',
		type: 'collection',
		placeholder: 'Add Field',
		default: {},
		displayOptions: showFor('lead', ['create']),
		options: moreLeadFields,
	},
	{
		displayName: 'Update Fields',
		name: 'updateFields',
		type: 'collection',
		placeholder: 'Add Field',
		default: {},
		displayOptions: showFor('lead', ['update']),
		description: 'Only the fields added here are sent; the others keep their values',
		options: [...leadFields, ...moreLeadFields],
	},
	...returnAllAndLimit('lead'),
	{
		displayName: 'Filters',
		name: 'filters',
		type: 'collection',
		placeholder: 'Add Filter',
		default: {},
		displayOptions: showFor('lead', ['getAll']),
		options: [
			locator({
				name: 'campaignId',
				displayName: 'Campaign',
				kind: 'campaign',
				description: 'Only leads of this campaign',
			}),
			{
				displayName: 'Search',
				name: 'search',
				type: 'string',
				default: '',
				placeholder: 'e.g. Acme',
				description: 'Text to look for in name, company and title',
			},
		],
	},
];
