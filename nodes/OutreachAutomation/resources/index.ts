import type { INodeProperties } from 'n8n-workflow';

import { campaign } from './campaign';
import { lead } from './lead';
import { message } from './message';
import type { Operation, ResourceTable } from './table';
import { describeResource } from './table';

/** Every resource of the action node, in the editor's order. */
export const RESOURCES: ResourceTable[] = [campaign, lead, message];

/** The Resource option and, for each resource, its operations and fields: all from the tables. */
export function resourceProperties(): INodeProperties[] {
	return [
		{
			displayName: 'Resource',
			name: 'resource',
			type: 'options',
			noDataExpression: true,
			options: RESOURCES.map(({ name, value }) => ({ name, value })),
			default: 'lead',
		},
		...RESOURCES.flatMap(describeResource),
	];
}

/** The table row of a resource's operation, if there is one. */
export function findOperation(
	resource: string,
	operation: string,
): { table: ResourceTable; operation: Operation } | undefined {
	const table = RESOURCES.find((candidate) => candidate.value === resource);
	const row = table?.operations.find((candidate) => candidate.value === operation);
	return table && row ? { table, operation: row } : undefined;
}
