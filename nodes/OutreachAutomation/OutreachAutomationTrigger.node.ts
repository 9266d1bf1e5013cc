import { createHash } from 'crypto';
import type {
	IDataObject,
	INodeExecutionData,
	INodeType,
	INodeTypeDescription,
	IPollFunctions,
} from 'n8n-workflow';
import { NodeConnectionTypes, NodeOperationError } from 'n8n-workflow';

import { messageFilterOptions, messageFilterQuery } from './shared/messageFilters';
import { unwrapLocators } from './shared/parameters';
import { searchCampaigns, searchLeads } from './listSearch/search';
import type { TriggerState } from './trigger/newMessages';
import { newestMessage, pollNewMessages } from './trigger/newMessages';
import { redactedFailure, redactValue } from './transport/redact';

export class OutreachAutomationTrigger implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Outreach Automation Trigger',
		name: 'outreachAutomationTrigger',
		icon: { light: 'file:outreachAutomation.svg', dark: 'file:outreachAutomation.dark.svg' },
		group: ['trigger'],
		version: 1,
		subtitle: '={{"New messages"}}',
		// n8n's nodes panel shows this text for the trigger and the action node together, so it names both.
		description:
			'Starts a workflow on each new message (a lead replied or a message was sent); the action node manages leads, campaigns and messages',
		defaults: { name: 'Outreach Automation Trigger' },
		polling: true,
		inputs: [],
		outputs: [NodeConnectionTypes.Main],
		credentials: [{ name: 'outreachAutomationApi', required: true }],
		properties: [
			{
				displayName: 'Filters',
				name: 'filters',
				type: 'collection',
				placeholder: 'Add Filter',
				default: {},
				options: messageFilterOptions('received'),
			},
			{
				displayName: 'Options',
				name: 'options',
				type: 'collection',
				placeholder: 'Add Option',
				default: {},
				options: [
					{
						displayName: 'Emit Existing Messages on First Run',
						name: 'emitExisting',
						type: 'boolean',
						default: false,
						description:
							'Whether the first poll after activation emits the messages already there. Off: the first poll only notes where things stand.',
					},
				],
			},
		],
	};

	methods = {
		listSearch: { searchLeads, searchCampaigns },
	};

	/** Every poll's items and errors pass the one redaction: n8n logs poll errors as they are. */
	async poll(this: IPollFunctions): Promise<INodeExecutionData[][] | null> {
		try {
			return redactValue(await OutreachAutomationTrigger.prototype.pollOnce.call(this), true);
		} catch (error) {
			throw redactedFailure(this.getNode(), error);
		}
	}

	async pollOnce(this: IPollFunctions): Promise<INodeExecutionData[][] | null> {
		// The locators sit inside the Filters collection, where n8n's extractValue leaves them as objects.
		const filters = unwrapLocators(
			this.getNodeParameter('filters', {}, { extractValue: true }),
		) as IDataObject;
		const options = this.getNodeParameter('options', {}) as IDataObject;
		const qs = messageFilterQuery(filters);

		const staticData = this.getWorkflowStaticData('node') as IDataObject & TriggerState;

		if (this.getMode() === 'manual') {
			const newest = await newestMessage(this, qs, staticData);
			if (!newest) {
				throw new NodeOperationError(this.getNode(), 'No message matches the trigger yet', {
					description:
						'There is no message with these filters. Send a message or wait for a reply, then fetch a test event again.',
				});
			}
			return [[{ json: newest }]];
		}

		// Changing the filters starts afresh: the memory belongs to one set of filters.
		const filterKey = createHash('sha256').update(JSON.stringify(qs)).digest('hex').slice(0, 16);
		const pollFunctions = this as IPollFunctions & { getPollBudgetMs?: () => number | undefined };
		const budget =
			typeof pollFunctions.getPollBudgetMs === 'function'
				? pollFunctions.getPollBudgetMs()
				: undefined;
		const budgetEnds = typeof budget === 'number' && budget > 0 ? Date.now() + budget : undefined;

		const { emit, state } = await pollNewMessages(
			this,
			qs,
			filterKey,
			{ ...staticData, seen: [...((staticData.seen as string[]) ?? [])] },
			options.emitExisting === true,
			budgetEnds,
		);
		// Only now, with every page read, does the memory move on (mutated in place, as n8n saves it).
		for (const key of Object.keys(staticData)) delete staticData[key];
		Object.assign(staticData, state);
		return emit.length ? [emit.map((json) => ({ json }))] : null;
	}
}
