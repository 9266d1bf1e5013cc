/**
 * Building n8n workflow JSON for import (`n8n import:workflow`), shared by the end-to-end tests and
 * the benchmarks: webhook-started workflows whose nodes run one after another.
 */
import { randomUUID } from 'node:crypto';

import { CREDENTIAL_TYPE, NODE_TYPES } from './runtime';

export type Parameters = Record<string, unknown>;

export interface NodeJson {
	id: string;
	name: string;
	type: string;
	typeVersion: number;
	position: [number, number];
	parameters: Parameters;
	credentials?: Record<string, { id: string; name: string }>;
	webhookId?: string;
	onError?: string;
	retryOnFail?: boolean;
	maxTries?: number;
	waitBetweenTries?: number;
}

export interface WorkflowJson {
	id: string;
	name: string;
	active: boolean;
	nodes: NodeJson[];
	connections: Record<
		string,
		{ main: Array<Array<{ node: string; type: 'main'; index: number }>> }
	>;
	settings: Record<string, unknown>;
	pinData: Record<string, unknown>;
}

export interface CredentialRef {
	readonly id: string;
	readonly name: string;
}

export const ACTION_NODE = 'Outreach Automation';
export const TRIGGER_NODE = 'Outreach Automation Trigger';

/** An expression parameter value. */
export const expr = (expression: string) => `={{ ${expression} }}`;

/** A resource locator given by ID; `expression` is evaluated per item, e.g. `$json.body.leadId`. */
export const byId = (expression: string) => ({ __rl: true, mode: 'id', value: expr(expression) });

/** The action node with our credential. */
export function outreachNode(
	credential: CredentialRef,
	parameters: Parameters,
	position: [number, number],
	extra: Partial<NodeJson> = {},
): NodeJson {
	return {
		id: randomUUID(),
		name: ACTION_NODE,
		type: NODE_TYPES.action,
		typeVersion: 1,
		position,
		parameters,
		credentials: { [CREDENTIAL_TYPE]: { id: credential.id, name: credential.name } },
		...extra,
	};
}

/** Connects each node to the next. */
export function chain(nodes: NodeJson[]): WorkflowJson['connections'] {
	const connections: WorkflowJson['connections'] = {};
	for (let i = 0; i + 1 < nodes.length; i++) {
		connections[nodes[i].name] = { main: [[{ node: nodes[i + 1].name, type: 'main', index: 0 }]] };
	}
	return connections;
}

export function workflow(id: string, name: string, nodes: NodeJson[]): WorkflowJson {
	return {
		id,
		name,
		active: false,
		nodes,
		connections: chain(nodes),
		settings: { executionOrder: 'v1' },
		pinData: {},
	};
}

/** A Webhook start node that answers with every item of the last node. */
export function webhookNode(path: string): NodeJson {
	return {
		id: randomUUID(),
		name: 'Webhook',
		type: 'n8n-nodes-base.webhook',
		typeVersion: 2,
		position: [0, 0],
		webhookId: randomUUID(),
		parameters: {
			httpMethod: 'POST',
			path,
			responseMode: 'lastNode',
			responseData: 'allEntries',
			options: {},
		},
	};
}
