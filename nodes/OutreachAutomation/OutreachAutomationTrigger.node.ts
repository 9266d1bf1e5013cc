import { createHash } from 'crypto';
import type {
	IDataObject,
	INodeExecutionData,
	INodeType,
	INodeTypeDescription,
	IPollFunctions,
} from 'n8n-workflow';
import { NodeConnectionTypes, NodeOperationError } from 'n8n-workflow';

import { filtersCollection } from './shared/filters';
import { messageFilterOptions, messageFilterQuery } from './shared/messageFilters';
import { unwrapLocators } from './shared/parameters';
import { searchCampaigns, searchLeads } from './listSearch/search';
import { normalizeBaseUrl, windowKey } from './transport/baseUrl';
import { now } from './transport/clock';
import { CREDENTIAL_TYPE } from './transport/constants';
import { newestMessage, pollNewMessages } from './trigger/newMessages';
import { onePollAtATime, triggerKey } from './trigger/overlap';
import { longestGapMs } from './trigger/pollTimes';
import type { TriggerState } from './trigger/state';
import { validState } from './trigger/state';
import { redactedFailure, redactValue } from './transport/redact';

/**
 * The time one poll may take where n8n does not say (n8n 1.x has no poll budget): under a minute,
 * the shortest poll interval, so polls do not pile up; a longer backlog is drained over several.
 */
export const DEFAULT_POLL_BUDGET_MS = 50_000;

/**
 * The time this poll may take: n8n's budget, but never over DEFAULT_POLL_BUDGET_MS. n8n 2.41 gives
 * 5 minutes to polls outside its durable scheduler, and starts the next scheduled poll even while one
 * still runs: such a poll emits nothing (trigger/overlap.ts), so a long poll delays new messages.
 */
export function pollBudgetMs(fromN8n: unknown): number {
	return typeof fromN8n === 'number' && fromN8n > 0
		? Math.min(fromN8n, DEFAULT_POLL_BUDGET_MS)
		: DEFAULT_POLL_BUDGET_MS;
}

/** The time n8n grants a poll, when it says (n8n 2.41+; its durable scheduler drops a poll past it). */
function n8nPollBudget(ctx: IPollFunctions): number | undefined {
	const withBudget = ctx as IPollFunctions & { getPollBudgetMs?: () => number | undefined };
	const budget =
		typeof withBudget.getPollBudgetMs === 'function' ? withBudget.getPollBudgetMs() : undefined;
	return typeof budget === 'number' && budget > 0 ? budget : undefined;
}

/**
 * Whether n8n runs this poll for a first publishing of the workflow (or, on n8n 1.x, any poll of it
 * until a restart): n8n 2.41's durable scheduler runs its scheduled polls as 'update'.
 */
function firstPublishing(ctx: IPollFunctions): boolean {
	return ['activate', 'create'].includes(ctx.getActivationMode());
}

/**
 * Beyond the poll intervals, how much older a message may be and still count as new when n8n may have
 * lost the trigger's start: an n8n restart, and a service clock a few minutes off n8n's.
 */
export const LOOK_BACK_MARGIN_MS = 5 * 60_000;

export class OutreachAutomationTrigger implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Outreach Automation Trigger',
		name: 'outreachAutomationTrigger',
		icon: { light: 'file:outreachAutomation.svg', dark: 'file:outreachAutomation.dark.svg' },
		group: ['trigger'],
		version: 1,
		subtitle: '={{"New messages"}}',
		// n8n's nodes panel lists the action node and its trigger as one entry and shows the trigger's
		// description for it (n8n's generateMergedNodesAndActions), so this describes the pair.
		description:
			'Manage leads, campaigns and messages of the Outreach Automation service, and start a workflow on each new message (a lead replied or a message was sent)',
		defaults: { name: 'Outreach Automation Trigger' },
		polling: true,
		inputs: [],
		outputs: [NodeConnectionTypes.Main],
		credentials: [{ name: 'outreachAutomationApi', required: true }],
		properties: [
			filtersCollection(messageFilterOptions('received')),
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

	/**
	 * Every poll's items and errors pass the one redaction: n8n logs poll errors as they are. A poll
	 * that starts while another of the same trigger runs in this process, or before n8n saved what the
	 * last one emitted, emits nothing; one that n8n gave a state a poll of it has safely moved on from
	 * goes on from that poll's state (see trigger/overlap.ts). The manual test event reads no saved
	 * state and is never held back.
	 */
	async poll(this: IPollFunctions): Promise<INodeExecutionData[][] | null> {
		const once = async (newer?: IDataObject) => {
			try {
				return redactValue(
					await OutreachAutomationTrigger.prototype.pollOnce.call(this, newer as TriggerState),
					true,
				);
			} catch (error) {
				throw redactedFailure(this.getNode(), error);
			}
		};
		if (this.getMode() === 'manual') return await once();
		const node = this.getNode();
		const workflowId = this.getWorkflow().id;
		return await onePollAtATime(
			{
				key: triggerKey(workflowId, node.name),
				loaded: this.getWorkflowStaticData('node'),
				budgetMs: n8nPollBudget(this),
				publishing: firstPublishing(this),
			},
			async ({ newer }) => await once(newer),
			(why) => {
				this.logger.info(
					why === 'running'
						? 'Outreach Automation Trigger: the previous poll of this trigger is still running; this poll emits nothing and leaves the new messages to it and the next poll'
						: 'Outreach Automation Trigger: a previous poll moved on and n8n has not saved its progress yet; this poll emits nothing and leaves the new messages to the next poll',
					{ workflowId, node: node.name },
				);
				return null;
			},
			(result) => ({ emitted: result !== null, state: this.getWorkflowStaticData('node') }),
		);
	}

	/** One poll; `newer`: the state to go on from instead of the one n8n loaded (trigger/overlap.ts). */
	async pollOnce(
		this: IPollFunctions,
		newer?: TriggerState,
	): Promise<INodeExecutionData[][] | null> {
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
		// ... and to one account: Base URL and a hash of the key (never the key itself).
		const credentials = await this.getCredentials(CREDENTIAL_TYPE);
		const account = windowKey(
			normalizeBaseUrl(credentials.baseUrl),
			String(credentials.apiKey ?? '').trim(),
		).slice(0, 16);

		const budgetEnds = now() + pollBudgetMs(n8nPollBudget(this));
		// Starting afresh anywhere but at a first publishing, n8n may have lost an earlier start (it
		// never saves the poll it runs at publishing unless it emitted; a restart empties this
		// process): messages from the last two poll intervals and LOOK_BACK_MARGIN_MS count as new.
		const newSince = firstPublishing(this)
			? undefined
			: now() - 2 * longestGapMs(this.getNodeParameter('pollTimes', {})) - LOOK_BACK_MARGIN_MS;

		if (newer) {
			this.logger.debug(
				'Outreach Automation Trigger: n8n has not saved the state the previous poll left yet; this poll goes on from that state',
			);
		}
		const loaded: TriggerState = newer ?? staticData;
		let previous: TriggerState = loaded;
		if (!validState(loaded)) {
			this.logger.warn(
				'Outreach Automation Trigger: the saved trigger state is not readable; starting afresh as on first activation',
			);
			previous = {};
		} else if (loaded.account !== undefined && loaded.account !== account) {
			this.logger.info(
				'Outreach Automation Trigger: the credential now points to another account (Base URL or API key changed); starting afresh as on first activation',
			);
		}

		const { emit, state } = await pollNewMessages(
			this,
			qs,
			{ filterKey, account },
			JSON.parse(JSON.stringify(previous)) as TriggerState,
			options.emitExisting === true,
			budgetEnds,
			newSince,
		);
		// Only now, with every page read, does the memory move on (mutated in place, as n8n saves it).
		for (const key of Object.keys(staticData)) delete staticData[key];
		Object.assign(staticData, state);
		return emit.length ? [emit.map((json) => ({ json }))] : null;
	}
}
