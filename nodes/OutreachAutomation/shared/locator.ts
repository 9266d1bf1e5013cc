import type { INodeProperties } from 'n8n-workflow';

interface LocatorOptions {
	name: string;
	displayName: string;
	/** "lead" or "campaign": picks the list search method and the wording. */
	kind: 'lead' | 'campaign';
	required?: boolean;
	description?: string;
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
				validation: [
					{
						type: 'regex',
						properties: {
							regex: '^\\S+$',
							errorMessage: `Not a valid ${label} ID (no spaces allowed)`,
						},
					},
				],
			},
		],
	};
}
