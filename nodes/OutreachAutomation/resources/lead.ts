import type { IDataObject, INodeProperties } from 'n8n-workflow';
import type { ItemParameters } from '../shared/parameters';

import { filtersCollection, optionsCollection } from '../shared/filters';
import { locator } from '../shared/locator';
import { assignFilled, invalid, isPrototypeKey, param, requiredId } from '../shared/parameters';
import { upsertRun } from './leadUpsert';
import { webAddress } from './profileIdentity';
import { defineResource, httpStatusOf, passOn, type ItemRun } from './table';

/**
 * The service's wire name for the profile address (snake_case like every other field). Change it
 * here only.
 */
const PROFILE_URL_FIELD = 'linkedin_url';

/** The lead's own fields: top-level on Create, inside "Update Fields" on Update. */
const leadFields: INodeProperties[] = [
	{
		displayName: 'First Name',
		name: 'firstName',
		type: 'string',
		default: '',
		placeholder: 'e.g. Ada',
	},
	{
		displayName: 'Last Name',
		name: 'lastName',
		type: 'string',
		default: '',
		placeholder: 'e.g. Lovelace',
	},
	{
		displayName: 'Company',
		name: 'company',
		type: 'string',
		default: '',
		placeholder: 'e.g. Analytical Engines Ltd',
	},
	{
		displayName: 'Title',
		name: 'title',
		type: 'string',
		default: '',
		placeholder: 'e.g. Head of Research',
	},
	{
		displayName: 'LinkedIn Profile URL',
		name: 'linkedinUrl',
		type: 'string',
		default: '',
		placeholder: 'e.g. https://www.linkedin.com/in/ada-lovelace',
		description: `The lead's profile address, sent as "${PROFILE_URL_FIELD}"`,
	},
];

/**
 * Create or Update's fields: Create's, with the profile address first and required, since leads are
 * matched by it.
 */
const upsertFields: INodeProperties[] = [
	...leadFields
		.filter((field) => field.name === 'linkedinUrl')
		.map((field) => ({
			...field,
			required: true,
			description: `${field.description}. The lead with this profile is updated; without one, a lead is created.`,
			hint: 'Leads are matched by this address, ignoring http/https, www., letter case, a trailing slash, query and fragment',
		})),
	...leadFields.filter((field) => field.name !== 'linkedinUrl'),
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
					{
						displayName: 'Name',
						name: 'name',
						type: 'string',
						default: '',
						placeholder: 'e.g. email',
					},
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

/** IDs are cleared to null (the lead leaves its list or campaign); text to "". */
const CLEARED_TO_NULL = new Set(['leadListId', 'campaignId']);

function isEmpty(value: unknown): boolean {
	return value === undefined || value === null || (typeof value === 'string' && !value.trim());
}

/**
 * Turns the UI's values into the API's body, checking what can be checked before sending. With
 * `clearEmpty` (Update), a field the user added and left empty is sent empty, so the service clears
 * it; otherwise (Create) empty fields are left out.
 */
function leadBody(ctx: ItemParameters, values: IDataObject, clearEmpty: boolean): IDataObject {
	const body: IDataObject = {};
	for (const [name, wire] of Object.entries(WIRE_NAMES)) {
		if (clearEmpty && Object.hasOwn(values, name) && isEmpty(values[name]))
			body[wire] = CLEARED_TO_NULL.has(name) ? null : '';
		else assignFilled(body, { [wire]: values[name] });
	}
	const url = body[PROFILE_URL_FIELD];
	if (typeof url === 'string' && url !== '') {
		// Sent as a full address: one without a scheme (as CSV imports store them) gets https://.
		const address = webAddress(url);
		if (typeof address !== 'string') {
			invalid(
				ctx,
				`LinkedIn Profile URL "${url}" ${address.refused}`,
				'Use the address of the profile, e.g. https://www.linkedin.com/in/ada-lovelace',
			);
		}
		body[PROFILE_URL_FIELD] = address;
	}
	const custom = ((values.customFields as IDataObject | undefined)?.field ?? []) as IDataObject[];
	for (const [index, entry] of custom.entries()) {
		if (typeof entry.name === 'object' && entry.name !== null)
			invalid(ctx, `Custom Fields: the name of field ${index + 1} must be text`);
		const name = String(entry.name ?? '').trim();
		if (!name) invalid(ctx, `Custom Fields: field ${index + 1} has no name`);
		if (isPrototypeKey(name))
			invalid(ctx, `Custom Fields: "${name}" cannot be used as a field name`);
		if (Object.hasOwn(body, name))
			invalid(ctx, `Custom Fields: "${name}" is already set by another field`);
		if (!isEmpty(entry.value)) body[name] = entry.value as string;
		else if (clearEmpty) body[name] = '';
	}
	return body;
}

function createBody(ctx: ItemParameters): IDataObject {
	const values: IDataObject = { ...param<IDataObject>(ctx, 'additionalFields', {}) };
	for (const field of leadFields) values[field.name] = param(ctx, field.name, '');
	const body = leadBody(ctx, values, false);
	if (!Object.keys(body).length) {
		invalid(
			ctx,
			'A lead needs at least one field',
			'Fill First Name, Last Name or LinkedIn Profile URL.',
		);
	}
	return body;
}

function updateBody(ctx: ItemParameters): IDataObject {
	const body = leadBody(ctx, param<IDataObject>(ctx, 'updateFields', {}), true);
	if (!Object.keys(body).length) {
		invalid(ctx, 'Update Fields is empty: nothing to update', 'Add at least one field to change.');
	}
	return body;
}

function listQuery(ctx: ItemParameters): IDataObject {
	const filters = param<IDataObject>(ctx, 'filters', {});
	return assignFilled({}, { search: filters.search, campaign_id: filters.campaignId });
}

const leadId = { parameter: 'leadId', label: 'Lead ID' };

/**
 * Whether an error answer is the API's own envelope (`success: false`): a 404 from anything else (a
 * website at a wrong Base URL answers every path so) says nothing about the lead.
 */
function inEnvelope(error: unknown): boolean {
	const body = (error as { errorResponse?: { body?: unknown } } | null)?.errorResponse?.body;
	return typeof body === 'object' && body !== null && (body as IDataObject).success === false;
}

/**
 * Delete, with Options > Succeed If Not Found: a lead the service does not know (deleted by an earlier
 * run, or never there) is output as `{id, deleted: false, outcome: 'notFound'}` instead of an error.
 */
async function deleteLead(item: ItemRun): Promise<IDataObject[]> {
	if (param<IDataObject>(item.parameters, 'options', {}).succeedIfNotFound !== true)
		return await item.send();
	try {
		return (await item.send()).map((result) => ({ ...result, outcome: 'deleted' }));
	} catch (error) {
		if (httpStatusOf(error) !== 404 || !inEnvelope(error)) passOn(item.parameters.getNode(), error);
		const id = requiredId(item.parameters, leadId.parameter, leadId.label);
		return [{ id, deleted: false, outcome: 'notFound' }];
	}
}

const deleteOptions = optionsCollection([
	{
		displayName: 'Succeed If Not Found',
		name: 'succeedIfNotFound',
		type: 'boolean',
		default: false,
		description:
			'Whether a lead that does not exist (e.g. deleted by an earlier run) counts as done instead of an error: output with deleted false and outcome "notFound" ("deleted" otherwise). A mistyped ID counts as done too; a "not found" that does not come from the Outreach Automation API (a wrong Base URL) is still an error.',
	},
]);

const leadPicker: INodeProperties = locator({
	name: 'leadId',
	displayName: 'Lead',
	kind: 'lead',
	required: true,
	description: 'The lead to work on. Choose from the list, or specify an ID.',
});

const additionalFields: INodeProperties = {
	displayName: 'Additional Fields',
	name: 'additionalFields',
	type: 'collection',
	placeholder: 'Add Field',
	default: {},
	options: moreLeadFields,
};

/**
 * An Update field, whose description says that leaving it empty clears it; text fields say it under
 * the input too (a description only shows on hover, and clearing loses data).
 */
function clearable(field: INodeProperties): INodeProperties {
	const clears =
		field.name === 'customFields'
			? 'A field added with an empty value is cleared on the lead.'
			: 'Left empty, it is cleared on the lead.';
	const before = field.description ? `${field.description}. ` : '';
	const hint = field.type === 'string' ? { hint: 'Left empty, it is cleared on the lead' } : {};
	return { ...field, description: `${before}${clears}`, ...hint };
}

const updateFields: INodeProperties = {
	displayName: 'Update Fields',
	name: 'updateFields',
	type: 'collection',
	placeholder: 'Add Field',
	default: {},
	description:
		'Only the fields added here are sent; the others keep their values. A field added and left empty is cleared on the lead.',
	options: [...leadFields, ...moreLeadFields].map(clearable),
};

const listFilters = filtersCollection([
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
]);

export const lead = defineResource({
	value: 'lead',
	name: 'Lead',
	defaultOperation: 'create',
	operations: [
		{
			name: 'Create',
			value: 'create',
			action: 'Create a lead',
			description: 'Create a new lead',
			toolDescription:
				'Creates a new lead in Outreach Automation from a first name, last name, company, title and/or LinkedIn profile URL (at least one). Returns the created lead as JSON, with its ID. Side effect: adds a lead to the account; calling it twice creates two leads (use Create or Update to avoid that).',
			method: 'POST',
			path: '/leads',
			body: createBody,
			safeToRepeat: false,
			fields: [...leadFields, additionalFields],
		},
		{
			name: 'Create or Update',
			value: 'upsert',
			action: 'Create or update a lead',
			description: 'Create a new record, or update the current one if it already exists (upsert)',
			toolDescription:
				'Creates a lead, or updates the existing lead with the same LinkedIn profile URL (required) so it is never added twice; prefer it over Create. Changes only the fields that differ; empty fields are left as they are. Returns the lead as JSON, with its ID and "outcome": "created", "updated" or "unchanged".',
			method: 'POST',
			path: '/leads',
			body: createBody,
			safeToRepeat: false,
			fields: [...upsertFields, additionalFields],
			runAll: upsertRun({
				body: createBody,
				profileField: PROFILE_URL_FIELD,
				label: 'LinkedIn Profile URL',
			}),
		},
		{
			name: 'Delete',
			value: 'delete',
			action: 'Delete a lead',
			description: 'Delete a lead',
			toolDescription:
				'Deletes the lead with the given ID from Outreach Automation. Returns the result of the deletion. Side effect: the lead is removed for good; this cannot be undone. With Succeed If Not Found on, an unknown ID returns deleted false and outcome "notFound" instead of an error.',
			method: 'DELETE',
			path: '/leads/{id}',
			id: leadId,
			safeToRepeat: false,
			fields: [leadPicker, deleteOptions],
			run: deleteLead,
		},
		{
			name: 'Get',
			value: 'get',
			action: 'Get a lead',
			description: 'Get a lead by ID',
			toolDescription:
				'Looks up one lead by its ID. Returns the lead as JSON: name, company, title, LinkedIn profile URL, connection status, campaign. Read-only. An unknown ID comes back as an error saying the lead was not found.',
			method: 'GET',
			path: '/leads/{id}',
			id: leadId,
			safeToRepeat: true,
			fields: [leadPicker],
		},
		{
			name: 'Get Many',
			value: 'getAll',
			action: 'Get many leads',
			description: 'List leads, optionally filtered by search text or campaign',
			toolDescription:
				'Lists leads, newest first, optionally only those matching a search text (name, company, title) or in one campaign. Returns one JSON object per lead, at most Limit of them (10 unless set otherwise). Read-only.',
			method: 'GET',
			path: '/leads',
			query: listQuery,
			list: true,
			safeToRepeat: true,
			fields: [listFilters],
		},
		{
			name: 'Update',
			value: 'update',
			action: 'Update a lead',
			description: 'Change some fields of a lead, leaving the others as they are',
			toolDescription:
				'Changes the given fields of an existing lead, found by its ID; the other fields keep their values. Returns the updated lead as JSON. Side effect: overwrites those fields in the account.',
			method: 'PATCH',
			path: '/leads/{id}',
			id: leadId,
			body: updateBody,
			safeToRepeat: true,
			fields: [leadPicker, updateFields],
		},
	],
});
