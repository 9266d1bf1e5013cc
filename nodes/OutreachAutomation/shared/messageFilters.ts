import type { IDataObject, INodeProperties } from 'n8n-workflow';

import { locator } from './locator';
import { assignFilled } from './parameters';

/** The message filters, shared by Message > Get Many and the trigger (same names, same query). */
export function messageFilterOptions(statusExample: string): INodeProperties[] {
	return [
		locator({
			name: 'campaignId',
			displayName: 'Campaign',
			kind: 'campaign',
			description: 'Only messages of this campaign',
		}),
		locator({
			name: 'leadId',
			displayName: 'Lead',
			kind: 'lead',
			description: 'Only messages to or from this lead',
		}),
		{
			displayName: 'Status',
			name: 'status',
			type: 'string',
			default: '',
			placeholder: `e.g. ${statusExample}`,
			description:
				'Only messages with this status, e.g. sent, delivered, read, replied, failed, or received (replies from leads)',
		},
	];
}

/** The message filters as the list endpoint's query (unset ones left out; the trigger hashes it, keep the order). */
export function messageFilterQuery(filters: IDataObject): IDataObject {
	return assignFilled(
		{},
		{ campaign_id: filters.campaignId, lead_id: filters.leadId, status: filters.status },
	);
}
