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

/** The "Options" collection of an operation (settings that change how it runs): one shape everywhere. */
export function optionsCollection(options: INodeProperties[]): INodeProperties {
	return {
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		options,
	};
}
