import type {
	IDataObject,
	IExecuteSingleFunctions,
	IHttpRequestOptions,
	INodeProperties,
	INodePropertyModeValidation,
} from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

/** displayOptions for one resource and some of its operations. */
export function showFor(resource: string, operations: string[], extra: IDataObject = {}) {
	return { show: { resource: [resource], operation: operations, ...extra } };
}

/** n8n's Return All / Limit pair, as every "Get Many" operation has it. */
export function returnAllAndLimit(resource: string): INodeProperties[] {
	return [
		{
			displayName: 'Return All',
			name: 'returnAll',
			type: 'boolean',
			displayOptions: showFor(resource, ['getAll']),
			default: false,
			description: 'Whether to return all results or only up to a given limit',
		},
		{
			displayName: 'Limit',
			name: 'limit',
			type: 'number',
			displayOptions: showFor(resource, ['getAll'], { returnAll: [false] }),
			typeOptions: { minValue: 1 },
			default: 50,
			description: 'Max number of results to return',
		},
	];
}

const idValidation = (label: string): INodePropertyModeValidation[] => [
	{
		type: 'regex',
		properties: { regex: '^\\S+$', errorMessage: `Not a valid ${label} ID (no spaces allowed)` },
	},
];

interface LocatorOptions {
	name: string;
	displayName: string;
	/** "lead" or "campaign": picks the list search method and the wording. */
	kind: 'lead' | 'campaign';
	required?: boolean;
	description?: string;
	displayOptions?: INodeProperties['displayOptions'];
}

/** A lead or campaign picker: searchable list (paged through the same pipeline) or a pasted ID. */
export function locator(options: LocatorOptions): INodeProperties {
	const label = options.kind === 'lead' ? 'Lead' : 'Campaign';
	return {
		displayName: options.displayName,
		name: options.name,
		type: 'resourceLocator',
		default: { mode: 'list', value: '' },
		required: options.required,
		description: options.description,
		displayOptions: options.displayOptions,
		modes: [
			{
				displayName: 'From List',
				name: 'list',
				type: 'list',
				placeholder: `Select a ${label.toLowerCase()}...`,
				typeOptions: {
					searchListMethod: options.kind === 'lead' ? 'searchLeads' : 'searchCampaigns',
					searchable: true,
				},
			},
			{
				displayName: 'ID',
				name: 'id',
				type: 'string',
				placeholder: options.kind === 'lead' ? 'e.g. ld_1a2b3c' : 'e.g. cmp_1a2b3c',
				validation: idValidation(label),
			},
		],
	};
}

/**
 * Resource locators reduced to their ID, also inside collections (n8n's `extractValue` only
 * unwraps a locator that is the parameter itself, not one nested in "Filters").
 */
export function unwrapLocators(value: unknown): unknown {
	if (Array.isArray(value)) return value.map(unwrapLocators);
	if (typeof value !== 'object' || value === null) return value;
	const object = value as IDataObject;
	if (object.__rl === true) return object.value;
	return Object.fromEntries(Object.entries(object).map(([key, inner]) => [key, unwrapLocators(inner)]));
}

/** The message filters, shared by Message > Get Many and the trigger (same names, same query). */
export function messageFilterOptions(statusExample: string): INodeProperties[] {
	return [
		locator({ name: 'campaignId', displayName: 'Campaign', kind: 'campaign', description: 'Only messages of this campaign' }),
		locator({ name: 'leadId', displayName: 'Lead', kind: 'lead', description: 'Only messages to or from this lead' }),
		{
			displayName: 'Status',
			name: 'status',
			type: 'string',
			default: '',
			placeholder: `e.g. ${statusExample}`,
			description:
				'Only messages with this status, e.g. sent, delivered, read, replied, failed, or received (replies from leads)',
		},
	];
}

/** The message filters as the list endpoint's query (unset ones left out; the trigger hashes it, keep the order). */
export function messageFilterQuery(filters: IDataObject): IDataObject {
	return assignFilled({}, { campaign_id: filters.campaignId, lead_id: filters.leadId, status: filters.status });
}

/** A parameter's value with resource locators reduced to their ID; `fallback` when not shown. */
export function param<T>(ctx: IExecuteSingleFunctions, name: string, fallback: T): T {
	return unwrapLocators(ctx.getNodeParameter(name, fallback, { extractValue: true })) as T;
}

/** Refuses bad input before any request, naming the field and what is wrong. */
export function invalid(ctx: IExecuteSingleFunctions, message: string, description?: string): never {
	throw new NodeOperationError(ctx.getNode(), message, {
		description,
		itemIndex: ctx.getItemIndex(),
	});
}

/** An ID from a picker or text field: required, trimmed, URL-encoded for the path. */
export function pathId(ctx: IExecuteSingleFunctions, name: string, label: string): string {
	const raw = param<unknown>(ctx, name, '');
	const id = typeof raw === 'string' || typeof raw === 'number' ? String(raw).trim() : '';
	if (!id) invalid(ctx, `${label} is empty`, `Pick a ${label.replace(/ ID$/, '').toLowerCase()} from the list or paste its ID.`);
	return encodeURIComponent(id);
}

/** Copies the non-empty values into `target` under their wire names. */
export function assignFilled(target: IDataObject, values: IDataObject): IDataObject {
	for (const [key, value] of Object.entries(values)) {
		if (value === undefined || value === null) continue;
		if (typeof value === 'string' && value.trim() === '') continue;
		target[key] = typeof value === 'string' ? value.trim() : value;
	}
	return target;
}

/**
 * Builds part of an operation's request from its parameters (checks input; fills path, query or
 * body). The pipeline runs an operation's builders when the request's turn in the rate-limit window
 * comes, not while n8n prepares every input item: reading parameters evaluates their expressions,
 * which would otherwise delay the first request by about a millisecond per item.
 */
export type RequestBuilder = (
	this: IExecuteSingleFunctions,
	requestOptions: IHttpRequestOptions,
) => Promise<IHttpRequestOptions>;

/** Each operation's builders, by operation name. */
export type RequestBuilders = Record<string, RequestBuilder[]>;

/** An operation's routing: method and fixed URL; `paginate` hands the request to the pipeline. */
export function routed(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url?: string) {
	return { request: { method, ...(url ? { url } : {}) }, send: { paginate: true } };
}

/** A builder that puts the URL-encoded ID of parameter `name` into `template` ("/leads/{id}"). */
export function idPath(template: string, name: string, label: string): RequestBuilder {
	return async function (this: IExecuteSingleFunctions, requestOptions: IHttpRequestOptions) {
		requestOptions.url = template.replace('{id}', pathId(this, name, label));
		return requestOptions;
	};
}
