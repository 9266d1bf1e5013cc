import type { INodeProperties } from 'n8n-workflow';

/** The "Filters" collection of a list (Lead/Message > Get Many, the trigger): one shape everywhere. */
export function filtersCollection(options: INodeProperties[]): INodeProperties {
	return {
		displayName: 'Filters',
		name: 'filters',
		type: 'collection',
		placeholder: 'Add Filter',
		default: {},
		options,
	};
}
