/**
 * Runs our nodes inside n8n's own engine (n8n-core's WorkflowExecute / RoutingNode / PollContext),
 * with real HTTP to whatever server the test points the credential at. No n8n server involved.
 */
import {
	DirectoryLoader,
	ExecuteContext,
	ExecutionLifecycleHooks,
	LoadOptionsContext,
	PollContext,
	RoutingNode,
	WorkflowExecute,
} from 'n8n-core';
import type {
	IAuthenticateGeneric,
	ICredentialDataDecryptedObject,
	ICredentialsDecrypted,
	IDataObject,
	IExecuteFunctions,
	IHttpRequestOptions,
	INode,
	INodeExecutionData,
	INodeListSearchResult,
	INodeParameters,
	INodeType,
	INodeTypes,
	IRun,
	IVersionedNodeType,
	IWorkflowBase,
	IWorkflowExecuteAdditionalData,
	WorkflowExecuteMode,
} from 'n8n-workflow';
import { ICredentialsHelper, NodeHelpers, Workflow } from 'n8n-workflow';

import { OutreachAutomationApi } from '../../credentials/OutreachAutomationApi.credentials';
import { OutreachAutomation } from '../../nodes/OutreachAutomation/OutreachAutomation.node';
import { OutreachAutomationTrigger } from '../../nodes/OutreachAutomation/OutreachAutomationTrigger.node';

export const CREDENTIAL = 'outreachAutomationApi';
const credentialType = new OutreachAutomationApi();

/** A start node that outputs the items given in its `items` parameter (a JSON string). */
class TestItems implements INodeType {
	description = {
		displayName: 'Test Items',
		name: 'testItems',
		group: ['input'],
		version: 1,
		description: 'Outputs fixed items',
		defaults: { name: 'Items' },
		inputs: [],
		outputs: ['main'],
		properties: [{ displayName: 'Items', name: 'items', type: 'string', default: '[]' }],
	} as unknown as INodeType['description'];

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const items = JSON.parse(this.getNodeParameter('items', 0) as string) as IDataObject[];
		return [items.map((json) => ({ json }))];
	}
}

/**
 * n8n's own cost for the same items, for the volume bench: reads the node's parameters for every item
 * (evaluating their expressions, as our node does) and outputs the items, without any request.
 */
class TestNoOp implements INodeType {
	description = {
		displayName: 'Test No-Op',
		name: 'testNoOp',
		group: ['transform'],
		version: 1,
		description: 'Evaluates its parameters per item and passes the items on',
		defaults: { name: 'No-Op' },
		inputs: ['main'],
		outputs: ['main'],
		properties: [{ displayName: 'First Name', name: 'firstName', type: 'string', default: '' }],
	} as unknown as INodeType['description'];

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const items = this.getInputData();
		return [
			items.map((item, i) => ({
				json: { ...item.json, firstName: this.getNodeParameter('firstName', i) as string },
				pairedItem: { item: i },
			})),
		];
	}
}

/**
 * n8n's own HTTP cost for the same items, for the volume bench: one POST /leads per item through n8n's
 * authenticated HTTP helper, all at once, with no pacing, retries or envelope handling.
 */
class TestRawHttp implements INodeType {
	description = {
		displayName: 'Test Raw HTTP',
		name: 'testRawHttp',
		group: ['transform'],
		version: 1,
		description: "Sends one request per item through n8n's HTTP helper",
		defaults: { name: 'Raw HTTP' },
		inputs: ['main'],
		outputs: ['main'],
		credentials: [{ name: CREDENTIAL, required: true }],
		properties: [{ displayName: 'First Name', name: 'firstName', type: 'string', default: '' }],
	} as unknown as INodeType['description'];

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const credentials = await this.getCredentials(CREDENTIAL);
		const items = this.getInputData();
		const answers = await Promise.all(
			items.map(
				async (_, i) =>
					(await this.helpers.httpRequestWithAuthentication.call(this, CREDENTIAL, {
						method: 'POST',
						url: `${String(credentials.baseUrl).replace(/\/+$/, '')}/api/v1/leads`,
						body: { first_name: this.getNodeParameter('firstName', i) as string },
						json: true,
					})) as IDataObject,
			),
		);
		return [answers.map((json, i) => ({ json, pairedItem: { item: i } }))];
	}
}

const nodeTypeList: Record<string, INodeType> = {
	outreachAutomation: new OutreachAutomation(),
	outreachAutomationTrigger: new OutreachAutomationTrigger(),
	testItems: new TestItems(),
	testNoOp: new TestNoOp(),
	testRawHttp: new TestRawHttp(),
};
// As n8n does when it loads a package: declarative nodes get "Request Options" (batching, timeout...).
for (const nodeType of Object.values(nodeTypeList))
	DirectoryLoader.applyDeclarativeNodeOptionParameters(nodeType);

const nodeTypes: INodeTypes = {
	getByName: (name: string) => nodeTypeList[name] as INodeType | IVersionedNodeType,
	getByNameAndVersion: (name: string, version?: number) =>
		NodeHelpers.getVersionedNodeType(nodeTypeList[name], version),
	getKnownTypes: () => ({}),
};

/** Applies the credential type's generic `authenticate`, as n8n's CredentialsHelper does. */
class TestCredentialsHelper extends ICredentialsHelper {
	constructor(private readonly data: ICredentialDataDecryptedObject) {
		super();
	}

	getParentTypes() {
		return [];
	}

	isCredentialUsableByNode() {
		return true;
	}

	async authenticate(
		credentials: ICredentialDataDecryptedObject,
		_typeName: string,
		requestOptions: IHttpRequestOptions,
		workflow: Workflow,
		node: INode,
	): Promise<IHttpRequestOptions> {
		const auth = credentialType.authenticate as IAuthenticateGeneric;
		const headers = { ...(requestOptions.headers ?? {}) } as IDataObject;
		for (const [name, raw] of Object.entries(auth.properties.headers ?? {})) {
			headers[name] = workflow.expression.getSimpleParameterValue(node, raw as string, 'internal', {
				$credentials: credentials,
			}) as string;
		}
		return { ...requestOptions, headers };
	}

	async preAuthentication() {
		return undefined;
	}

	async runPreAuthentication() {
		return undefined;
	}

	async getCredentials(): Promise<never> {
		throw new Error('not used in tests');
	}

	async getDecrypted(): Promise<ICredentialDataDecryptedObject> {
		return { ...this.data };
	}

	async updateCredentials() {}

	async updateCredentialsOauthTokenData() {}

	getCredentialsProperties() {
		return credentialType.properties;
	}
}

export interface Credentials {
	baseUrl: string;
	apiKey: string;
}

function additionalData(
	credentials: Credentials,
	workflowData: IWorkflowBase,
	mode: WorkflowExecuteMode,
) {
	return {
		credentialsHelper: new TestCredentialsHelper({ ...credentials }),
		hooks: new ExecutionLifecycleHooks(mode, 'test-execution', workflowData),
		variables: {},
		restApiUrl: 'http://127.0.0.1:5678/rest',
		instanceBaseUrl: 'http://127.0.0.1:5678/',
		webhookBaseUrl: 'http://127.0.0.1:5678/webhook',
		webhookWaitingBaseUrl: 'http://127.0.0.1:5678/webhook-waiting',
		webhookTestBaseUrl: 'http://127.0.0.1:5678/webhook-test',
		formBaseUrl: 'http://127.0.0.1:5678/form',
		formWaitingBaseUrl: 'http://127.0.0.1:5678/form-waiting',
		formTestBaseUrl: 'http://127.0.0.1:5678/form-test',
		mcpBaseUrl: 'http://127.0.0.1:5678/mcp',
		mcpTestBaseUrl: 'http://127.0.0.1:5678/mcp-test',
		currentNodeExecutionIndex: 0,
		executeWorkflow: async () => {
			throw new Error('not used in tests');
		},
		getRunExecutionData: async () => undefined,
		getRuntimeCredential: async () => undefined,
		logAiEvent: () => {},
		startRunnerTask: async () => {
			throw new Error('not used in tests');
		},
	} as unknown as IWorkflowExecuteAdditionalData;
}

const credentialsRef = { [CREDENTIAL]: { id: '1', name: 'Outreach Automation (test)' } };

function actionNode(parameters: INodeParameters, settings: Partial<INode> = {}): INode {
	return {
		id: 'node-outreach',
		name: 'Outreach Automation',
		type: 'outreachAutomation',
		typeVersion: 1,
		position: [200, 0],
		parameters,
		credentials: credentialsRef,
		...settings,
	};
}

export interface RunResult {
	/** Output items (error items included, with Continue On Fail). */
	items: INodeExecutionData[];
	/** The node's error when it failed without Continue On Fail. */
	error?: Error & IDataObject;
	run: IRun;
}

/**
 * Runs the action node once over `inputs` (one input item each), the way n8n's engine runs it
 * after a start node.
 */
export async function runNode(
	credentials: Credentials,
	parameters: INodeParameters,
	inputs: IDataObject[] = [{}],
	options: {
		continueOnFail?: boolean;
		onStart?: (cancel: () => void) => void;
		/** Another node type in its place (the volume bench's no-op, for n8n's own cost). */
		nodeType?: string;
	} = {},
): Promise<RunResult> {
	const start: INode = {
		id: 'node-items',
		name: 'Items',
		type: 'testItems',
		typeVersion: 1,
		position: [0, 0],
		parameters: { items: JSON.stringify(inputs) },
	};
	const node = actionNode(parameters, {
		...(options.continueOnFail ? { onError: 'continueRegularOutput' } : {}),
		...(options.nodeType ? { type: options.nodeType } : {}),
	});
	const workflowData: IWorkflowBase = {
		id: 'wf-test',
		name: 'test',
		active: false,
		isArchived: false,
		nodes: [start, node],
		connections: { Items: { main: [[{ node: node.name, type: 'main', index: 0 }]] } },
		createdAt: new Date(),
		updatedAt: new Date(),
		activeVersionId: null,
	} as unknown as IWorkflowBase;
	const workflow = new Workflow({
		id: workflowData.id,
		nodes: workflowData.nodes,
		connections: workflowData.connections,
		active: false,
		nodeTypes,
	});
	const running = new WorkflowExecute(
		additionalData(credentials, workflowData, 'manual'),
		'manual',
	).run({
		workflow,
		startNode: start,
	});
	// As the Stop button does: cancels the execution, which aborts n8n's cancel signal.
	options.onStart?.(() => running.cancel());
	const run = await running;
	const nodeRun = run.data.resultData.runData[node.name]?.[0];
	return {
		items: nodeRun?.data?.main?.[0] ?? [],
		error: (nodeRun?.error ?? run.data.resultData.error) as RunResult['error'],
		run,
	};
}

/** A trigger node kept across polls: one Workflow object keeps its static data, as n8n does. */
export class TriggerHarness {
	readonly workflow: Workflow;

	readonly node: INode;

	private data: IWorkflowExecuteAdditionalData;

	constructor(credentials: Credentials, parameters: INodeParameters = {}) {
		this.node = {
			id: 'node-trigger',
			name: 'Outreach Automation Trigger',
			type: 'outreachAutomationTrigger',
			typeVersion: 1,
			position: [0, 0],
			parameters,
			credentials: credentialsRef,
		};
		this.workflow = new Workflow({
			id: 'wf-trigger',
			nodes: [this.node],
			connections: {},
			active: true,
			nodeTypes,
			staticData: {},
		});
		this.data = additionalData(credentials, { id: 'wf-trigger' } as IWorkflowBase, 'trigger');
	}

	/**
	 * One poll as the activated workflow runs it; returns the emitted items (empty when null). n8n 1.x
	 * runs every poll of a trigger as 'activate' (the context of its publishing); n8n 2.41's durable
	 * scheduler its scheduled polls as 'update' (cli `workflows/triggers/trigger-execution-context.factory.js`,
	 * `createPollExecutionContext`).
	 */
	async poll(
		mode: 'trigger' | 'manual' = 'trigger',
		activation: 'activate' | 'update' | 'init' = 'activate',
	): Promise<IDataObject[]> {
		const ctx = new PollContext(
			this.workflow,
			this.node,
			this.data,
			mode,
			mode === 'manual' ? 'manual' : activation,
		);
		const result = await nodeTypeList.outreachAutomationTrigger.poll!.call(ctx);
		return result ? result[0].map((item) => item.json) : [];
	}

	/**
	 * The context n8n 2.41.1's durable scheduler gives one poll (cli
	 * `workflows/triggers/trigger-execution-context.factory.js`, `getExecutePollFunctions`): the node's
	 * static data is `staged`, a copy of the cursor n8n loaded for this poll; the poll budget is given
	 * only to fenced (scheduled) polls, the poll run at publishing gets n8n-core's default of 5 minutes.
	 */
	durableContext(
		activation: 'activate' | 'update',
		staged: IDataObject,
		budgetMs?: number,
	): PollContext {
		return new PollContext(
			this.workflow,
			this.node,
			this.data,
			'trigger',
			activation,
			undefined,
			undefined,
			undefined,
			undefined,
			() => staged,
			budgetMs === undefined ? undefined : () => budgetMs,
		);
	}

	/**
	 * A scheduled poll of an active workflow as n8n runs it after activation: the trigger's static
	 * data is saved only when the poll emits items, so what a poll that emits nothing changed is lost.
	 */
	async scheduledPoll(): Promise<IDataObject[]> {
		const data = this.workflow.getStaticData('node', this.node);
		const before = JSON.parse(JSON.stringify(data)) as IDataObject;
		const emitted = await this.poll();
		if (emitted.length === 0) {
			for (const key of Object.keys(data)) delete data[key];
			Object.assign(data, before);
		}
		return emitted;
	}

	/** Points the credential elsewhere (another key or Base URL), as a user editing it would. */
	useCredentials(credentials: Credentials): void {
		this.data = additionalData(credentials, { id: 'wf-trigger' } as IWorkflowBase, 'trigger');
	}

	/** The trigger node's static data, as n8n would save it. */
	state(): IDataObject {
		return JSON.parse(
			JSON.stringify(this.workflow.getStaticData('node', this.node)),
		) as IDataObject;
	}
}

/** A resource-locator list search, as the editor calls it. */
export async function listSearch(
	credentials: Credentials,
	method: 'searchLeads' | 'searchCampaigns',
	filter?: string,
	paginationToken?: string,
): Promise<INodeListSearchResult> {
	const node = actionNode({ resource: 'lead', operation: 'get' });
	const workflow = new Workflow({ nodes: [node], connections: {}, active: false, nodeTypes });
	const ctx = new LoadOptionsContext(
		workflow,
		node,
		additionalData(credentials, {} as IWorkflowBase, 'manual'),
		'leadId',
	);
	const search = nodeTypeList.outreachAutomation.methods!.listSearch![method];
	return await search.call(ctx, filter, paginationToken);
}

/** An expression of the credential (e.g. its test request's baseURL), evaluated as n8n does with `$credentials`. */
export function evaluateCredentialExpression(
	expression: string,
	credentials: Credentials,
): unknown {
	const node = actionNode({ resource: 'lead', operation: 'get' });
	const workflow = new Workflow({ nodes: [node], connections: {}, active: false, nodeTypes });
	return workflow.expression.getSimpleParameterValue(node, expression, 'internal', {
		$credentials: credentials,
	});
}

/**
 * The credential's test, run the way n8n's CredentialsTester runs it: a temporary node whose only
 * routing is the test request, through RoutingNode, then the rules. Returns n8n's verdict.
 */
export async function testCredential(
	credentials: Credentials,
): Promise<{ status: 'OK' | 'Error'; message: string }> {
	const test = credentialType.test;
	const temp: INodeType = {
		description: {
			displayName: 'Temp',
			name: 'temp',
			group: ['transform'],
			version: 1,
			description: '',
			defaults: {},
			inputs: ['main'],
			outputs: ['main'],
			credentials: [{ name: CREDENTIAL, required: true }],
			properties: [
				{
					displayName: 'Temp',
					name: 'temp',
					type: 'string',
					default: '',
					routing: { request: test.request },
				},
			],
		} as unknown as INodeType['description'],
	};
	const node: INode = {
		id: 'temp',
		name: 'Temp-Node',
		type: 'temp',
		typeVersion: 1,
		position: [0, 0],
		parameters: {},
		credentials: credentialsRef,
	};
	const types: INodeTypes = {
		...nodeTypes,
		getByNameAndVersion: (name: string, version?: number) =>
			name === 'temp' ? temp : nodeTypes.getByNameAndVersion(name, version),
	};
	const workflow = new Workflow({
		nodes: [node],
		connections: {},
		active: false,
		nodeTypes: types,
	});
	const data = additionalData(credentials, {} as IWorkflowBase, 'internal');
	const ctx = new ExecuteContext(
		workflow,
		node,
		data,
		'internal',
		{ resultData: { runData: {} } } as never,
		0,
		[],
		{ main: [[{ json: {} }]] },
		{ node, data: {}, source: null },
		[],
	);
	const decrypted: ICredentialsDecrypted = {
		id: '1',
		name: 'test',
		type: CREDENTIAL,
		data: { ...credentials },
	};
	const rules = (test.rules ?? []) as Array<{ type: string; properties: IDataObject }>;
	let response: INodeExecutionData[][] | null | undefined;
	try {
		response = await new RoutingNode(ctx, temp, decrypted).runNode();
	} catch (error) {
		const status = (error as { cause?: { response?: { status: number; statusText?: string } } })
			.cause?.response;
		if (status) {
			for (const rule of rules) {
				if (rule.type === 'responseCode' && rule.properties.value === status.status) {
					return { status: 'Error', message: String(rule.properties.message) };
				}
			}
			return {
				status: 'Error',
				message: status.statusText || `Received HTTP status code: ${status.status}`,
			};
		}
		const code = (error as { cause?: { code?: string } }).cause?.code;
		return { status: 'Error', message: code ?? String((error as Error).message) };
	}
	for (const rule of rules) {
		if (rule.type === 'responseSuccessBody') {
			const body = response?.[0]?.[0]?.json as IDataObject;
			if (body?.[rule.properties.key as string] === rule.properties.value) {
				return { status: 'Error', message: String(rule.properties.message) };
			}
		}
	}
	return { status: 'OK', message: 'Connection successful!' };
}
