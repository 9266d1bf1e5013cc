import { NodeConnectionTypes, type INodeType, type INodeTypeDescription } from 'n8n-workflow';

import { campaignOperations, campaignProperties } from './resources/campaign';
import { leadOperations, leadProperties } from './resources/lead';
import { messageOperations, messageProperties } from './resources/message';
import { searchCampaigns, searchLeads } from './listSearch/search';
import { routeRequest } from './routing/route';

export class OutreachAutomation implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Outreach Automation',
		name: 'outreachAutomation',
		icon: { light: 'file:outreachAutomation.svg', dark: 'file:outreachAutomation.dark.svg' },
		group: ['transform'],
		version: 1,
		subtitle: '={{$parameter["operation"] + ": " + $parameter["resource"]}}',
		description: 'Manage leads, campaigns and messages of the Outreach Automation service',
		defaults: { name: 'Outreach Automation' },
		usableAsTool: true,
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		credentials: [{ name: 'outreachAutomationApi', required: true }],
		// No requestDefaults: the pipeline builds every URL from the credential, and RoutingNode would
		// evaluate an expression baseURL twice per input item before sending anything (measured: 500
		// items started ~1 s later). Every operation sets `send.paginate`, so RoutingNode hands each
		// request to the one pipeline.
		requestOperations: { pagination: routeRequest },
		properties: [
			{
				displayName: 'Resource',
				name: 'resource',
				type: 'options',
				noDataExpression: true,
				options: [
					{ name: 'Campaign', value: 'campaign' },
					{ name: 'Lead', value: 'lead' },
					{ name: 'Message', value: 'message' },
				],
				default: 'lead',
			},
			leadOperations,
			campaignOperations,
			messageOperations,
			...leadProperties,
			...campaignProperties,
			...messageProperties,
		],
	};

	methods = {
		listSearch: { searchLeads, searchCampaigns },
	};
}
