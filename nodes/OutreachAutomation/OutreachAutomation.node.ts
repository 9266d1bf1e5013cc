import { NodeConnectionTypes, type INodeType, type INodeTypeDescription } from 'n8n-workflow';

import { searchCampaigns, searchLeads } from './listSearch/search';
import { resourceProperties } from './resources';
import { checkRoutingContract, routeOperation } from './routing/route';

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
		// Every operation is handed to routeOperation, which builds its request from the resource's
		// operation table. No requestDefaults: RoutingNode would evaluate an expression baseURL twice
		// per input item before the first request, and nothing would read it.
		requestOperations: { pagination: routeOperation },
		properties: resourceProperties(),
	};

	constructor() {
		// Declarative routing the router would ignore fails here, when n8n loads the node.
		checkRoutingContract(this.description);
	}

	methods = {
		listSearch: { searchLeads, searchCampaigns },
	};
}
