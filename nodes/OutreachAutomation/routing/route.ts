import type {
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	INodeProperties,
	INodeTypeDescription,
} from 'n8n-workflow';
import { NodeOperationError, UnexpectedError } from 'n8n-workflow';

import { findOperation } from '../resources';
import type { ItemRun, ItemRunner, Operation, Pipeline, ResourceTable } from '../resources/table';
import { itemParameters, requiredId, type ItemParameters } from '../shared/parameters';
import { metaCount, readFirstPage, readList, type SizedPage } from '../transport/pages';
import { pause } from '../transport/clock';
import type { ApiRequest } from '../transport/request';
import { apiRequest, cancelSignal, windowKeyOf, withdrawWaits } from '../transport/request';
import { WithdrawnError } from '../transport/errors';
import { redactedFailure, redactValue } from '../transport/redact';
import { pacingHint } from '../transport/report';
import { readRequestSettings, type RequestSettings } from './requestOptions';

/**
 * The parts of an operation's request read from its parameters: path with its id, query, body (`body`
 * when given: already built from them).
 */
function readParameters(ctx: ItemParameters, operation: Operation, body?: IDataObject) {
	const id = operation.id ? requiredId(ctx, operation.id.parameter, operation.id.label) : undefined;
	return {
		path:
			id === undefined ? operation.path : operation.path.replace('{id}', encodeURIComponent(id)),
		id,
		qs: operation.query?.(ctx),
		body: body ?? operation.body?.(ctx),
	};
}

/** The `exclusive` of ItemRun for one node run: work with the same key runs one at a time, in order. */
function keyedQueue(): ItemRun['exclusive'] {
	const tails = new Map<string, Promise<unknown>>();
	return async (key, work) => {
		const mine = (tails.get(key) ?? Promise.resolve()).then(work);
		const tail = mine.catch(() => undefined);
		tails.set(key, tail);
		try {
			return await mine;
		} finally {
			if (tails.get(key) === tail) tails.delete(key);
		}
	};
}

/**
 * Items started and not yet done, at most. Starting more buys nothing: a request past what the key's
 * window allows waits in the pacer's queue anyway, and every started item holds its parameters, its
 * request and its promises (a few KB): 100,000 started together held hundreds of MB. 1,000 in flight
 * keeps a window of up to 1,000 requests full (the API allows 100 a minute).
 */
export const ITEMS_IN_FLIGHT = 1000;

/** What an item left once done: its output items, why it failed, or that it was withdrawn unsent. */
const WITHDRAWN = 'withdrawn';
type Settled = INodeExecutionData[] | { failure: unknown } | typeof WITHDRAWN;

/**
 * The failure a node run fails with, saying what became of the other items: those carried out are
 * done in the service although the node outputs nothing (a re-run repeats them), the rest were not sent.
 */
function withOthers<E extends { description?: string | null }>(
	failure: E,
	settled: Array<Settled | undefined>,
	failedIndex: number,
): E {
	let done = 0;
	let failed = 0;
	for (let i = 0; i < settled.length; i++) {
		const item = settled[i];
		if (i === failedIndex || item === undefined || item === WITHDRAWN) continue;
		if (Array.isArray(item)) done++;
		else failed++;
	}
	if (settled.length < 2) return failure;
	const notSent = settled.length - 1 - done - failed;
	const parts = [`${done} carried out`];
	if (failed) parts.push(`${failed} failed too`);
	if (notSent) parts.push(`${notSent} not sent`);
	const said = `Of the other ${settled.length - 1} items: ${parts.join(', ')}.`;
	const before = failure.description?.trim();
	failure.description = before ? `${before}${/[.!?]$/.test(before) ? '' : '.'} ${said}` : said;
	return failure;
}

/**
 * Runs the action node: every input item's request goes through the one pipeline in transport/
 * (paced, retried where safe), built from the operation's table row alone.
 *
 * Its own execute() rather than n8n's declarative RoutingNode, because only an execute() gets n8n's
 * cancel signal (Stop ends waits and requests at once), reads just the parameters its operation
 * needs, and can output any number of items (RoutingNode appends them with one spread call, which
 * overflows the stack above about 125,000).
 *
 * Items start in input order, up to ITEMS_IN_FLIGHT at a time (the pacer spaces their requests by the
 * rate limit), or in batches when Request Options > Batching is set. After a failure without Continue On
 * Fail no further item starts, requests still waiting are withdrawn unsent (those under way finish) and
 * the node fails with the first failure in input order. Output keeps the input order; each item is
 * paired with the input item it came from. With Continue On Fail an item that failed gives one error
 * item.
 */
export async function executeOperation(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const inputs = this.getInputData();
	const resource = this.getNodeParameter('resource', 0) as string;
	const name = this.getNodeParameter('operation', 0) as string;
	const found = findOperation(resource, name);
	if (!found) {
		throw new NodeOperationError(
			this.getNode(),
			`The operation "${name}" of "${resource}" is not supported`,
		);
	}
	const settings = readRequestSettings(this);
	const signal = cancelSignal(this);
	const continueOnFail = this.continueOnFail();
	const exclusive = keyedQueue();
	let state: unknown;
	const shared = <T>(make: () => T): T => (state ??= make()) as T;
	// An operation with its own run gets it once for the execution: state shared by its items lives there.
	const own = found.operation.runAll?.({
		node: this.getNode(),
		pipeline: pipelineFor(this, { resource: found.table.name, transport: settings.transport }),
		items: inputs.length,
	});
	const run = (itemIndex: number) =>
		own
			? runOwn(this, own, itemIndex)
			: runItem(this, found, settings, itemIndex, { exclusive, shared });
	const batchGate = batchGates(settings, signal);

	// After a failure without Continue On Fail the node fails: requests still waiting for their turn
	// (up to ITEMS_IN_FLIGHT, minutes at 100 a minute) are withdrawn unsent; those under way finish.
	const withdraw = new AbortController();
	const onStop = () => withdraw.abort();
	if (signal?.aborted) onStop();
	signal?.addEventListener('abort', onStop, { once: true });
	withdrawWaits(this, withdraw.signal);

	const settled: Array<Settled | undefined> = new Array(inputs.length);
	let next = 0;
	let failed = false;
	const lane = async () => {
		while (next < inputs.length && !failed && !signal?.aborted) {
			// Taken in input order and started without an await in between (unless a batch waits), so
			// items that depend on each other (the same profile in Create or Update) queue in order.
			const itemIndex = next++;
			const gate = batchGate(itemIndex);
			if (gate) {
				await gate;
				if (failed || signal?.aborted) return;
			}
			try {
				settled[itemIndex] = await run(itemIndex);
			} catch (failure) {
				settled[itemIndex] = failure instanceof WithdrawnError ? WITHDRAWN : { failure };
				if (!continueOnFail) {
					failed = true;
					withdraw.abort();
				}
			}
		}
	};
	const lanes: Array<Promise<void>> = [];
	for (let i = 0; i < Math.min(ITEMS_IN_FLIGHT, inputs.length); i++) lanes.push(lane());
	try {
		await Promise.all(lanes);
	} finally {
		signal?.removeEventListener('abort', onStop);
	}

	const output: INodeExecutionData[] = [];
	for (let itemIndex = 0; itemIndex < inputs.length; itemIndex++) {
		const done = settled[itemIndex];
		// Not started: the execution was stopped, or an earlier item failed (thrown below first).
		if (done === undefined) break;
		// Withdrawn unsent: another item failed (thrown below).
		if (done === WITHDRAWN) continue;
		if (!Array.isArray(done)) {
			const failure = redactedFailure(this.getNode(), done.failure);
			if (signal?.aborted || !continueOnFail) throw withOthers(failure, settled, itemIndex);
			output.push({
				json: { error: failure.message },
				error: failure,
				pairedItem: { item: itemIndex },
			});
			continue;
		}
		// One by one: a list can hold more items than a spread call takes arguments.
		for (const item of done) output.push({ ...item, pairedItem: { item: itemIndex } });
	}
	if (signal?.aborted) {
		throw new NodeOperationError(this.getNode(), 'The execution was cancelled');
	}
	const hint = pacingHint(this);
	// Shown with the node's output (n8n 1.x and 2.x both have it; guarded for anything older).
	if (hint && typeof this.addExecutionHints === 'function')
		this.addExecutionHints({ message: hint, type: 'info', location: 'outputPane' });
	return [output];
}

/**
 * Request Options > Batching: the wait before an item may start (undefined: none). Batch n starts the
 * interval after batch n-1 did; items are asked for in input order, so each batch's wait is made once.
 */
function batchGates(
	settings: RequestSettings,
	signal: AbortSignal | undefined,
): (itemIndex: number) => Promise<void> | undefined {
	const { batchSize, batchInterval } = settings;
	if (!batchSize) return () => undefined;
	let batch = 0;
	let gate: Promise<void> = Promise.resolve();
	return (itemIndex) => {
		const mine = Math.floor(itemIndex / batchSize);
		if (mine === 0) return undefined;
		if (mine > batch) {
			batch = mine;
			gate = gate.then(async () => await pause(batchInterval, signal));
		}
		return gate;
	};
}

/** The one pipeline for an operation's own run, with the resource and Request Options of the node. */
function pipelineFor(
	ctx: IExecuteFunctions,
	base: Pick<ApiRequest, 'resource' | 'transport'>,
): Pipeline {
	return {
		send: async ({ onSend, ...request }) => {
			const prepare = onSend
				? async () => {
						onSend();
						return {};
					}
				: undefined;
			const { data, meta } = await apiRequest(ctx, { ...base, ...request, prepare });
			return { data, total: metaCount(meta?.total) };
		},
		// A first page is only ever one that firstPage below returned: a SizedPage.
		readAll: async (request, first) =>
			await readList(ctx, { ...base, ...request }, undefined, first as SizedPage | undefined),
		firstPage: async (request) => await readFirstPage(ctx, { ...base, ...request }),
		credentialKey: async () => await windowKeyOf(ctx),
	};
}

async function runOwn(
	ctx: IExecuteFunctions,
	run: ItemRunner,
	itemIndex: number,
): Promise<INodeExecutionData[]> {
	const list = await run(itemParameters(ctx, itemIndex));
	return list.map((json) => ({ json: redactValue(json, true) }));
}

async function runItem(
	ctx: IExecuteFunctions,
	{ table, operation }: { table: ResourceTable; operation: Operation },
	settings: RequestSettings,
	itemIndex: number,
	perRun: Pick<ItemRun, 'exclusive' | 'shared'>,
): Promise<INodeExecutionData[]> {
	const parameters = itemParameters(ctx, itemIndex);
	const request: ApiRequest = {
		method: operation.method,
		path: operation.path,
		resource: table.name,
		itemIndex,
		safeToRepeat: operation.safeToRepeat,
		transport: settings.transport,
	};

	if (operation.list) {
		const returnAll = parameters.getNodeParameter('returnAll', false) as boolean;
		const limit = returnAll ? undefined : (parameters.getNodeParameter('limit', 50) as number);
		const list = await readList(
			ctx,
			{ ...request, ...readParameters(parameters, operation) },
			limit,
		);
		const output: INodeExecutionData[] = new Array(list.length);
		for (let i = 0; i < list.length; i++) output[i] = { json: redactValue(list[i], true) };
		return output;
	}

	const send = (given?: { body?: IDataObject }) =>
		sendRow(ctx, table, operation, parameters, request, given?.body);
	const jsons = operation.run
		? await operation.run({
				parameters,
				send,
				...perRun,
				request: async (method, path, qs) =>
					(await apiRequest(ctx, { ...request, method, path, qs, safeToRepeat: true })).data,
				readAll: async (path, qs) =>
					await readList(ctx, { ...request, method: 'GET', path, qs, safeToRepeat: true }),
			})
		: await send();
	return jsons.map((json) => ({ json: redactValue(json, true) }));
}

/** The row's one request for an item, and what it outputs (not yet redacted). */
async function sendRow(
	ctx: IExecuteFunctions,
	table: ResourceTable,
	operation: Operation,
	parameters: ItemParameters,
	request: ApiRequest,
	body: IDataObject | undefined,
): Promise<IDataObject[]> {
	const { itemIndex } = request;
	let id: string | undefined;
	const prepare = async () => {
		const parts = readParameters(parameters, operation, body);
		id = parts.id;
		return parts;
	};
	const { data } = await apiRequest(ctx, { ...request, prepare });
	const empty =
		data === undefined || data === null || (typeof data === 'object' && !Object.keys(data).length);
	if (operation.method === 'DELETE' && empty) {
		// Some servers answer a delete with no data: still confirm what was deleted.
		return [{ id: id ?? null, deleted: true }];
	}
	if (empty) {
		const done = operation.method === 'GET' ? 'answered' : 'confirmed the request';
		throw new NodeOperationError(
			ctx.getNode(),
			`The Outreach Automation API ${done} but sent no ${table.name.toLowerCase()} data`,
			{
				description:
					operation.method === 'GET'
						? 'Nothing to output. Try again; if it persists, the service may not support this operation.'
						: 'The request was carried out but its result is unknown here: check the service before running it again (running it again may do it twice).',
				itemIndex,
			},
		);
	}
	return (Array.isArray(data) ? data : [data]) as IDataObject[];
}

function routingProblems(properties: INodeProperties[], path: string): string[] {
	const problems: string[] = [];
	for (const property of properties) {
		const where = `${path}${property.name}`;
		if (property.routing) problems.push(`${where} has routing`);
		for (const option of property.options ?? []) {
			if (!('name' in option) || typeof option !== 'object') continue;
			if ('routing' in option && option.routing) {
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
 * Refuses, when the node loads, declarative routing (requestDefaults, requestOperations, `routing`
 * on a field or option): executeOperation builds every request from the operation tables and would
 * silently ignore it. Returns the description unchanged.
 */
export function checkRoutingContract(description: INodeTypeDescription): INodeTypeDescription {
	const problems = routingProblems(description.properties, '');
	if (description.requestDefaults) problems.push('requestDefaults is set');
	if (description.requestOperations) problems.push('requestOperations is set');
	if (problems.length) {
		throw new UnexpectedError(
			`${description.displayName}: declarative routing that the operation tables would ignore: ${problems.join('; ')}. ` +
				'Put the request in the operation table instead.',
		);
	}
	return description;
}
