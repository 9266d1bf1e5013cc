/**
 * The node as an AI tool: what n8n makes of `usableAsTool` (the "Outreach Automation Tool" variant) and
 * what a model is told about each operation. n8n builds the variant from this node's description by
 * appending "Tool" to its name; the "@tool" display condition is true for that name only (in the editor
 * and at run time), so these tests build it the same way and read it with n8n-workflow's own helpers.
 */
import {
	deepCopy,
	NodeHelpers,
	type INode,
	type INodeParameters,
	type INodeType,
	type INodeTypeDescription,
} from 'n8n-workflow';

import { OutreachAutomation } from '../../../nodes/OutreachAutomation/OutreachAutomation.node';
import { RESOURCES } from '../../../nodes/OutreachAutomation/resources';
import { TOOL_LIMIT_DEFAULT } from '../../../nodes/OutreachAutomation/resources/table';

const action = new OutreachAutomation().description;

/** What n8n 2.41's tool generation keeps of our description (name + "Tool", ai_tool output). */
function toolVariant(): INodeTypeDescription {
	const tool = deepCopy(action);
	tool.name = `${tool.name}Tool`;
	tool.displayName = `${tool.displayName} Tool`;
	delete tool.usableAsTool;
	return tool;
}

const tool = toolVariant();

function parameters(description: INodeTypeDescription, values: INodeParameters): INodeParameters {
	return NodeHelpers.getNodeParameters(
		description.properties,
		values,
		true,
		false,
		{ typeVersion: 1 },
		description,
	)!;
}

const OPERATIONS = RESOURCES.flatMap((table) =>
	table.operations.map((operation) => ({ resource: table.value, operation })),
);

describe('the Tool variant tells a model what each operation does', () => {
	it.each(OPERATIONS.map((o) => [`${o.resource}.${o.operation.value}`, o]))(
		'%s: its own description, read by n8n as the tool description',
		(_name, { resource, operation }) => {
			const values = parameters(tool, { resource, operation: operation.value });
			expect(values.toolDescription).toBe(operation.toolDescription);
			const node: INode = {
				id: '1',
				name: operation.action,
				type: `n8n-nodes-outreach-automation.${tool.name}`,
				typeVersion: 1,
				position: [0, 0],
				parameters: values,
			};
			expect(NodeHelpers.getToolDescriptionForNode(node, { description: tool } as INodeType)).toBe(
				operation.toolDescription,
			);
		},
	);

	it.each(OPERATIONS.map((o) => [`${o.resource}.${o.operation.value}`, o]))(
		'%s: says what it returns, and whether it only reads',
		(_name, { operation }) => {
			expect(operation.toolDescription).toMatch(/Returns /);
			const reads = operation.method === 'GET';
			expect(operation.toolDescription.includes('Read-only')).toBe(reads);
		},
	);

	it('the operations with effects outside the account say so in plain words', () => {
		const text = (resource: string, value: string) =>
			RESOURCES.find((t) => t.value === resource)!.operations.find((o) => o.value === value)!
				.toolDescription;
		expect(text('message', 'send')).toMatch(/Sends a real message/);
		expect(text('message', 'send')).toMatch(/twice sends it twice/);
		expect(text('campaign', 'start')).toMatch(/sending real connection requests and messages/);
		expect(text('campaign', 'create')).toMatch(/Nothing is sent until the campaign is started/);
		expect(text('lead', 'delete')).toMatch(/cannot be undone/);
	});

	it('a description edited in the editor wins over ours', () => {
		const values = parameters(tool, {
			resource: 'lead',
			operation: 'create',
			toolDescription: 'Adds a prospect',
		});
		expect(values.toolDescription).toBe('Adds a prospect');
	});

	it('n8n adds no second Tool Description: the node has its own parameter of that name', () => {
		// n8n's tool generation adds "descriptionType" + "toolDescription" only when the node has none.
		expect(action.properties.some((p) => p.name === 'toolDescription')).toBe(true);
		expect(action.properties.some((p) => p.name === 'descriptionType')).toBe(false);
	});

	it('the action node itself shows no tool description', () => {
		for (const { resource, operation } of OPERATIONS) {
			const values = parameters(action, { resource, operation: operation.value });
			expect(values).not.toHaveProperty('toolDescription');
		}
	});
});

describe('Get Many as a tool returns a few results unless asked for more', () => {
	const lists = OPERATIONS.filter((o) => o.operation.list);

	it('lists exist for leads, campaigns and messages', () => {
		expect(lists.map((o) => o.resource).sort()).toEqual(['campaign', 'lead', 'message']);
	});

	it.each(lists.map((o) => [o.resource, o]))(
		'%s: Limit defaults to 10 in the tool, 50 in the action node; Return All stays off and available',
		(_name, { resource, operation }) => {
			const asTool = parameters(tool, { resource, operation: operation.value });
			expect(TOOL_LIMIT_DEFAULT).toBe(10);
			expect(asTool.limit).toBe(TOOL_LIMIT_DEFAULT);
			expect(asTool.returnAll).toBe(false);
			const asAction = parameters(action, { resource, operation: operation.value });
			expect(asAction.limit).toBe(50);
			expect(asAction.returnAll).toBe(false);
			const everything = parameters(tool, {
				resource,
				operation: operation.value,
				returnAll: true,
			});
			expect(everything.returnAll).toBe(true);
			expect(everything).not.toHaveProperty('limit');
		},
	);

	it('a limit chosen by the user or the model is kept', () => {
		const values = parameters(tool, {
			resource: 'lead',
			operation: 'getAll',
			limit: "={{ $fromAI('limit', 'How many leads', 'number') }}",
		});
		expect(values.limit).toBe("={{ $fromAI('limit', 'How many leads', 'number') }}");
	});
});
