import {
	NodeConnectionTypes,
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeType,
	type INodeTypeDescription,
} from 'n8n-workflow';

import { searchCampaigns, searchLeads } from './listSearch/search';
import { resourceProperties } from './resources';
import { requestOptionsProperty } from './routing/requestOptions';
import { checkRoutingContract, executeOperation } from './routing/route';

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
		properties: [...resourceProperties(), requestOptionsProperty],
	};

	constructor() {
		// Declarative routing that execute() would ignore fails here, when n8n loads the node.
		checkRoutingContract(this.description);
	}

	methods = {
		listSearch: { searchLeads, searchCampaigns },
	};

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return await executeOperation.call(this);
	}
}
