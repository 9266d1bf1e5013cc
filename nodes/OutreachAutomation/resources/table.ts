import type { IDataObject, INode, INodeProperties, JsonObject } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';
import type { ItemParameters } from '../shared/parameters';

/**
 * Reads an operation's parameters and returns one part of its request (query or body), refusing bad
 * input. Runs when the request's turn in the rate-limit window comes, not while n8n prepares every
 * input item: reading parameters evaluates their expressions, about a millisecond per item.
 */
export type RequestPart = (ctx: ItemParameters) => IDataObject;

/**
 * What an operation's own `run` can do for one input item. Every request still goes through the one
 * pipeline (pacing, retries, errors); the run only decides which requests and what is output.
 */
export interface ItemRun {
	parameters: ItemParameters;
	/**
	 * The row's own request (path, id, query and body from the row, or `body` when given: a body the
	 * run already built and checked is sent as it is), then the row's usual output.
	 */
	send(given?: { body?: IDataObject }): Promise<IDataObject[]>;
	/** One more request (`path` below /api/v1, ids encoded); returns the envelope's data. */
	request(method: 'GET', path: string, qs?: IDataObject): Promise<unknown>;
	/** Every item of a list, all pages (read the way Get Many's Return All reads them). */
	readAll(path: string, qs?: IDataObject): Promise<IDataObject[]>;
	/**
	 * Runs `work` after the work of earlier items of this node run with the same key has finished: a
	 * check-then-write of one item then sees what an earlier item with the same key wrote. Nothing is
	 * kept once no item with that key is running.
	 */
	exclusive<T>(key: string, work: () => Promise<T>): Promise<T>;
	/**
	 * State shared by the items of this node run (made by `make` on first use, dropped with the run):
	 * what an earlier item did that a later one must know. Keep it O(1) per item.
	 */
	shared<T>(make: () => T): T;
}

/** Throws an error of the pipeline on as it is (n8n's error classes return one of their own unchanged). */
export function passOn(node: INode, error: unknown): never {
	if (error instanceof NodeApiError) throw new NodeApiError(node, error as unknown as JsonObject);
	throw new NodeOperationError(node, error as Error);
}

/** The HTTP status of an error from the pipeline (e.g. 404, 409), if it came from an answer. */
export function httpStatusOf(error: unknown): number | undefined {
	const code = (error as { httpCode?: unknown } | null)?.httpCode;
	const status = typeof code === 'string' ? Number(code) : NaN;
	return Number.isInteger(status) ? status : undefined;
}

/** Network failures that happen before a request leaves: nothing can have been carried out. */
const NEVER_SENT = new Set(['refused', 'unknownHost', 'tls']);

/**
 * Whether a failed write may still have been carried out: its answer was lost (no answer, a 5xx, a
 * 429 from something in front of the API, a request under way when stopped, an answer without data).
 * A refusal in the answer (4xx, a 429 in the API's own envelope) or a connection that never opened
 * carried nothing out.
 */
export function mayHaveRun(error: unknown): boolean {
	const response = (error as { errorResponse?: { kind?: unknown; body?: unknown } } | null)
		?.errorResponse;
	if (typeof response?.kind === 'string' && NEVER_SENT.has(response.kind)) return false;
	const status = httpStatusOf(error);
	if (status === undefined) return true;
	if (status === 429) {
		const body = response?.body as { success?: unknown } | undefined;
		return !(typeof body === 'object' && body !== null && body.success === false);
	}
	return status < 400 || status >= 500;
}

/** A request of an operation's own run; routing adds the resource and the user's Request Options. */
export interface RunRequest {
	method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
	/** Below /api/v1; ids already URL-encoded. */
	path: string;
	qs?: IDataObject;
	body?: IDataObject;
	/** The id the request is about, for error messages. */
	id?: string;
	itemIndex?: number;
	/** Whether a 5xx or a lost answer may be retried: true only when repeating it cannot do anything twice. */
	safeToRepeat: boolean;
	/**
	 * Called once the request has its turn and goes out: a request still waiting may be withdrawn
	 * unsent (another item failed), and then it did nothing.
	 */
	onSend?: () => void;
}

/**
 * The one request pipeline (pacing, retries, errors) as an operation's own run sees it. Routing passes
 * it in: resources describe, they never send anything themselves.
 */
export interface Pipeline {
	/** One request: its data, and `meta.total` when the server gives a usable count. */
	send(request: RunRequest): Promise<{ data: unknown; total?: number }>;
	/**
	 * Every item of a list endpoint, all pages read the way Return All reads them; from page 2 on when
	 * given the list's first page as `firstPage` just read it.
	 */
	readAll(request: RunRequest, first?: FirstPage): Promise<IDataObject[]>;
	/** The credential's rate-limit window key (a hash, never the API key), for what is learnt per server. */
	credentialKey(): Promise<string | undefined>;
	/**
	 * The first page of a list, as large as the server serves (a refused page size falls back, as in
	 * Return All), with `meta.total` when usable.
	 */
	firstPage(request: RunRequest): Promise<FirstPage>;
}

/** A list's first page, with `meta.total` when usable (and what the pipeline needs to read on). */
export interface FirstPage {
	items: IDataObject[];
	total?: number;
}

/** One input item of an operation that runs its own requests: its output objects (usually one). */
export type ItemRunner = (parameters: ItemParameters) => Promise<IDataObject[]>;

/**
 * An operation that needs more than one request per item, or state shared by the items of one execution
 * (e.g. Create or Update: one index of the existing leads for every item). Called once per execution; the
 * returned function is called for each item, in input order, and items may overlap. Every request goes
 * through `pipeline`. Nothing it keeps may outlive the execution, except what it learns per server.
 */
export type OperationRun = (execution: {
	node: INode;
	pipeline: Pipeline;
	/** How many input items the execution has. */
	items: number;
}) => ItemRunner;

interface OperationBase {
	/** The option as the editor lists it (`value` is stored in users' workflows: never rename it). */
	value: string;
	name: string;
	action: string;
	description: string;
	/**
	 * What an AI agent reads when the node is attached as a tool: what the operation does, what it returns,
	 * and any effect outside the account's data (a sent message, a started campaign), in plain words.
	 */
	toolDescription: string;
	/** Below /api/v1. A `{id}` in it is replaced by the URL-encoded value of the `id` parameter. */
	path: string;
	/** The parameter that fills `{id}`, and how messages name it ("Lead ID is empty"). */
	id?: { parameter: string; label: string };
	query?: RequestPart;
	/** Whether a 5xx or a lost answer may be retried: true only when repeating it cannot do anything twice. */
	safeToRepeat: boolean;
	/** A list: Return All and Limit are shown, and the pages are walked. */
	list?: boolean;
	/** The parameters shown for this operation, in order; their displayOptions are derived here. */
	fields?: INodeProperties[];
	/**
	 * For an operation that reads before it writes (or after a refusal): runs one item instead of the
	 * row's single request, and returns the item's output. Without it, the row's request is sent as is.
	 */
	run?: (item: ItemRun) => Promise<IDataObject[]>;
	/**
	 * For an operation whose items share state within one execution (an index read once for all of
	 * them): called once per execution instead of `run` and the row's request.
	 */
	runAll?: OperationRun;
}

/** A request that sends a body must say how it is built: a missing body is a type error. */
export type Operation = OperationBase &
	(
		| { method: 'GET' | 'DELETE'; body?: undefined }
		| { method: 'POST' | 'PATCH'; body: RequestPart }
	);

export interface ResourceTable {
	/** The resource option (`value` is stored in users' workflows) and its name in messages ("Lead"). */
	value: string;
	name: string;
	defaultOperation: string;
	/** In the editor's order: alphabetical by name. */
	operations: Operation[];
}

/** The body of an action that sends nothing but an empty JSON object (e.g. Start Campaign). */
export const emptyBody: RequestPart = () => ({});

const RETURN_ALL: INodeProperties = {
	displayName: 'Return All',
	name: 'returnAll',
	type: 'boolean',
	default: false,
	description: 'Whether to return all results or only up to a given limit',
};

const LIMIT: INodeProperties = {
	displayName: 'Limit',
	name: 'limit',
	type: 'number',
	displayOptions: { show: { returnAll: [false], '@tool': [false] } },
	typeOptions: { minValue: 1 },
	default: 50,
	description: 'Max number of results to return',
};

/** Get Many as an AI tool: a few results by default, so one call cannot flood a model's context. */
export const TOOL_LIMIT_DEFAULT = 10;

/**
 * The same parameter, shown instead of LIMIT in the Tool variant ("@tool" is true there at run time too).
 * Spread from LIMIT: n8n's lint asks every Limit for 50, the regular node's convention; this smaller
 * default is deliberate and only reaches agents.
 */
const TOOL_LIMIT: INodeProperties = {
	...LIMIT,
	displayOptions: { show: { returnAll: [false], '@tool': [true] } },
	default: TOOL_LIMIT_DEFAULT,
};

function fieldsOf(operation: Operation): INodeProperties[] {
	return [...(operation.list ? [RETURN_ALL, LIMIT, TOOL_LIMIT] : []), ...(operation.fields ?? [])];
}

/**
 * The Tool variant's description of one operation. n8n adds its own "Tool Description" (the action text
 * only) unless the node has a `toolDescription` parameter; this one defaults to the operation's own text
 * and stays editable.
 */
function toolDescriptionOf(resource: string, operation: Operation): INodeProperties {
	// A plain name: n8n's lint reads a member expression as a missing default.
	const text = operation.toolDescription;
	return {
		displayName: 'Tool Description',
		name: 'toolDescription',
		type: 'string',
		default: text,
		typeOptions: { rows: 4 },
		description:
			'What the AI agent reads about this tool: what it does, what it returns and its side effects',
		displayOptions: {
			show: { resource: [resource], operation: [operation.value], '@tool': [true] },
		},
	};
}

/** Refuses, when the package loads, a table whose rows cannot make a request. */
function checkTable(table: ResourceTable): void {
	const values = table.operations.map((operation) => operation.value);
	const problems: string[] = [];
	if (!values.includes(table.defaultOperation))
		problems.push(`default "${table.defaultOperation}" is not an operation`);
	if (new Set(values).size !== values.length) problems.push('an operation value appears twice');
	for (const operation of table.operations) {
		const where = `${table.value}.${operation.value}`;
		if (!operation.path.startsWith('/')) problems.push(`${where}: path must start with "/"`);
		if (operation.path.includes('{id}') !== (operation.id !== undefined)) {
			problems.push(`${where}: a path with {id} needs \`id\`, and only such a path`);
		}
		if (operation.toolDescription.trim().length < 40)
			problems.push(`${where}: toolDescription must tell a model what it does and returns`);
		if (operation.list && operation.method !== 'GET')
			problems.push(`${where}: a list is read with GET`);
		if (operation.list && operation.run) problems.push(`${where}: a list has no run of its own`);
		if (operation.list && operation.runAll) problems.push(`${where}: a list has no run of its own`);
		if (operation.run && operation.runAll) problems.push(`${where}: run or runAll, not both`);
		const bodyExpected = operation.method === 'POST' || operation.method === 'PATCH';
		if (bodyExpected !== (typeof operation.body === 'function')) {
			problems.push(`${where}: POST and PATCH need a body builder, GET and DELETE none`);
		}
	}
	if (problems.length) {
		throw new TypeError(`Operation table "${table.value}": ${problems.join('; ')}`);
	}
}

/** Checks a resource's table and returns it, typed. */
export function defineResource(table: ResourceTable): ResourceTable {
	checkTable(table);
	return table;
}

/**
 * What the editor shows for one resource, derived from its table: the Operation options, then every
 * field once, shown for the operations that list it (its own displayOptions, e.g. `returnAll:
 * [false]`, kept).
 */
export function describeResource(table: ResourceTable): INodeProperties[] {
	const { defaultOperation } = table;
	const operationOption: INodeProperties = {
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: [table.value] } },
		options: table.operations.map(({ name, value, action, description }) => ({
			name,
			value,
			action,
			description,
		})),
		default: defaultOperation,
	};
	const shownFor = new Map<INodeProperties, string[]>();
	for (const operation of table.operations) {
		for (const field of fieldsOf(operation)) {
			shownFor.set(field, [...(shownFor.get(field) ?? []), operation.value]);
		}
	}
	const fields = [...shownFor].map(([field, operations]) => ({
		...field,
		displayOptions: {
			...field.displayOptions,
			show: { resource: [table.value], operation: operations, ...field.displayOptions?.show },
		},
	}));
	const toolDescriptions = table.operations.map((operation) =>
		toolDescriptionOf(table.value, operation),
	);
	return [operationOption, ...toolDescriptions, ...fields];
}
