import type {
	DeclarativeRestApiSettings,
	IDataObject,
	IExecutePaginationFunctions,
	IExecuteSingleFunctions,
	INodeExecutionData,
	INodeProperties,
	INodeTypeDescription,
} from 'n8n-workflow';
import { NodeOperationError, UnexpectedError } from 'n8n-workflow';

import { findOperation } from '../resources';
import type { Operation } from '../resources/table';
import { requiredId } from '../shared/parameters';
import { readList } from '../transport/pages';
import type { ApiRequest } from '../transport/request';
import { apiRequest } from '../transport/request';
import { redactedFailure, redactValue } from '../transport/redact';

function toItems(data: unknown): INodeExecutionData[] {
	if (Array.isArray(data)) return data.map((json) => ({ json: json as IDataObject }));
	return [{ json: (data ?? {}) as IDataObject }];
}

/**
 * n8n's RoutingNode appends each input item's output with one spread call, which overflows the
 * stack above about 125,000 items. Past this many, a clear error instead of a crash or a cut.
 */
export const MAX_ITEMS_PER_INPUT = 100_000;

/** The parts of an operation's request read from its parameters: path with its id, query, body. */
async function readParameters(ctx: IExecuteSingleFunctions, operation: Operation) {
	const id = operation.id ? requiredId(ctx, operation.id.parameter, operation.id.label) : undefined;
	return {
		path:
			id === undefined ? operation.path : operation.path.replace('{id}', encodeURIComponent(id)),
		id,
		qs: operation.query?.(ctx),
		body: operation.body?.(ctx),
	};
}

/**
 * Runs one operation of the action node. RoutingNode hands every item's request here, because each
 * operation option sets `send.paginate` and the node sets `requestOperations.pagination`; the request
 * then goes through the one pipeline in transport/ (paced, retried where safe) instead of
 * RoutingNode's own call.
 *
 * The contract of this path:
 * - The operation's table row is the whole request: method, path and id, query and body builders,
 *   whether it lists, whether it is safe to repeat. Method, URL, query, body and headers that
 *   RoutingNode prepared are not read.
 * - Taken from RoutingNode: the node's Request Options timeout, proxy and ignore-SSL setting;
 *   batching, which RoutingNode applies before calling here.
 * - Everything else of n8n's declarative routing (requestDefaults, `routing` on a field: request,
 *   send.property, preSend, output.postReceive, maxResults; other requestOperations) would be
 *   silently ignored here, so checkRoutingContract refuses it when the node loads.
 */
export async function routeOperation(
	this: IExecutePaginationFunctions,
	prepared: DeclarativeRestApiSettings.ResultOptions,
): Promise<INodeExecutionData[]> {
	try {
		return redactValue(await runOperation.call(this, prepared), true);
	} catch (error) {
		throw redactedFailure(this.getNode(), error);
	}
}

async function runOperation(
	this: IExecutePaginationFunctions,
	prepared: DeclarativeRestApiSettings.ResultOptions,
): Promise<INodeExecutionData[]> {
	const resource = this.getNodeParameter('resource') as string;
	const name = this.getNodeParameter('operation') as string;
	const found = findOperation(resource, name);
	if (!found) {
		throw new NodeOperationError(
			this.getNode(),
			`The operation "${name}" of "${resource}" is not supported`,
			{
				itemIndex: this.getItemIndex(),
			},
		);
	}
	const { table, operation } = found;
	const { timeout, proxy, skipSslCertificateValidation } = prepared.options;
	const request: ApiRequest = {
		method: operation.method,
		path: operation.path,
		resource: table.name,
		itemIndex: this.getItemIndex(),
		safeToRepeat: operation.safeToRepeat,
		transport: {
			timeout,
			proxy,
			skipSslCertificateValidation:
				skipSslCertificateValidation === true || skipSslCertificateValidation === 'true',
		},
	};

	if (operation.list) {
		const returnAll = this.getNodeParameter('returnAll', false) as boolean;
		const limit = returnAll ? undefined : (this.getNodeParameter('limit', 50) as number);
		const items = await readList(
			this,
			{ ...request, ...(await readParameters(this, operation)) },
			limit,
		);
		if (items.length > MAX_ITEMS_PER_INPUT) {
			throw new NodeOperationError(
				this.getNode(),
				`The list has ${items.length} items: more than n8n can output from one node run (${MAX_ITEMS_PER_INPUT})`,
				{
					description:
						'Nothing was returned rather than part of the list. Split the read with filters (e.g. one input item per campaign or search), or use Limit.',
					itemIndex: this.getItemIndex(),
				},
			);
		}
		const output: INodeExecutionData[] = new Array(items.length);
		for (let i = 0; i < items.length; i++) output[i] = { json: items[i] };
		return output;
	}

	let id: string | undefined;
	const prepare = async () => {
		const parts = await readParameters(this, operation);
		id = parts.id;
		return parts;
	};
	const { data } = await apiRequest(this, { ...request, prepare });
	const empty =
		data === undefined || data === null || (typeof data === 'object' && !Object.keys(data).length);
	if (operation.method === 'DELETE' && empty) {
		// Some servers answer a delete with no data: still confirm what was deleted.
		return [{ json: { id: id ?? null, deleted: true } }];
	}
	if (empty) {
		const done = operation.method === 'GET' ? 'answered' : 'confirmed the request';
		throw new NodeOperationError(
			this.getNode(),
			`The Outreach Automation API ${done} but sent no ${table.name.toLowerCase()} data`,
			{
				description:
					operation.method === 'GET'
						? 'Nothing to output. Try again; if it persists, the service may not support this operation.'
						: 'The request was carried out but its result is unknown here: check the service before running it again (running it again may do it twice).',
				itemIndex: this.getItemIndex(),
			},
		);
	}
	return toItems(data);
}

/** The only routing an operation option may carry: hand the request to routeOperation. */
const HANDED_TO_ROUTER = JSON.stringify({ send: { paginate: true } });

function routingProblems(properties: INodeProperties[], path: string): string[] {
	const problems: string[] = [];
	for (const property of properties) {
		const where = `${path}${property.name}`;
		if (property.routing) problems.push(`${where} has routing`);
		for (const option of property.options ?? []) {
			if (!('name' in option) || typeof option !== 'object') continue;
			if ('routing' in option && option.routing) {
				const handed =
					property.name === 'operation' && JSON.stringify(option.routing) === HANDED_TO_ROUTER;
				if (!handed)
					problems.push(
						`${where} option "${'value' in option ? option.value : option.name}" has routing`,
					);
			}
			if ('displayName' in option && 'type' in option) {
				problems.push(...routingProblems([option as INodeProperties], `${where}.`));
			}
			if ('values' in option && Array.isArray(option.values)) {
				problems.push(...routingProblems(option.values, `${where}.${option.name}.`));
			}
		}
	}
	return problems;
}

/**
 * Refuses, when the node loads, any declarative routing that routeOperation would ignore (see its
 * contract). Returns the description unchanged.
 */
export function checkRoutingContract(description: INodeTypeDescription): INodeTypeDescription {
	const problems = routingProblems(description.properties, '');
	if (description.requestDefaults) problems.push('requestDefaults is set');
	const operations = Object.keys(description.requestOperations ?? {});
	if (
		operations.join() !== 'pagination' ||
		description.requestOperations?.pagination !== routeOperation
	) {
		problems.push('requestOperations must be exactly { pagination: routeOperation }');
	}
	if (problems.length) {
		throw new UnexpectedError(
			`${description.displayName}: declarative routing that the operation tables would ignore: ${problems.join('; ')}. ` +
				'Put the request in the operation table instead.',
		);
	}
	return description;
}
