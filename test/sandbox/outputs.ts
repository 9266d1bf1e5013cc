/**
 * Zod schemas of what the nodes output: one item of each operation and of the trigger. The resources are
 * the sandbox's answers (types.ts; the spec leaves their fields "not shown", so the sandbox's shape is the
 * contract); the node adds its `outcome` where an option makes it tell what it did.
 *
 * The one source of the JSON Schemas under nodes/OutreachAutomation/__schema__/ (`npm run schemas` writes
 * them, test/nodes/OutreachAutomation/schemas.test.ts fails when they differ): written with zod's v4 API,
 * whose toJSONSchema the generator uses, while schemas.ts (request bodies) keeps the v3 API.
 */
import { z } from 'zod/v4';

import {
	CAMPAIGN_STATUSES,
	CONNECTION_STATUSES,
	INBOUND_STATUSES,
	MESSAGE_DIRECTIONS,
	OUTBOUND_STATUSES,
} from './schemas';
import type { Campaign, CampaignAnalytics, Lead, Message } from './types';

const id = (what: string) => z.string().describe(`The ${what}'s ID`);
const time = (what: string) => z.string().describe(`${what} (ISO 8601)`);

export const LeadItem = z.object({
	id: id('lead'),
	first_name: z.string(),
	last_name: z.string(),
	company: z.string(),
	title: z.string(),
	linkedin_url: z.string().describe('LinkedIn profile URL'),
	lead_list_id: z.string().nullable(),
	campaign_id: z.string().nullable(),
	connection_status: z.enum(CONNECTION_STATUSES),
	created_at: time('Created'),
	updated_at: time('Last changed'),
});

const Step = z.object({
	type: z.string().describe('connection_request, message, or a step type of the service'),
	note: z.string().optional().describe('connection_request: the note sent with it'),
	delay_days: z.number().optional().describe('message: days after the previous step'),
	body: z.string().optional().describe('message: its text'),
});

export const CampaignItem = z.object({
	id: id('campaign'),
	name: z.string(),
	type: z.string(),
	lead_list_id: z.string().nullable(),
	steps: z.array(Step),
	status: z.enum(CAMPAIGN_STATUSES),
	created_at: time('Created'),
	updated_at: time('Last changed'),
	started_at: time('First started').nullable(),
	paused_at: time('Last paused').nullable(),
});

export const MessageItem = z.object({
	id: id('message'),
	lead_id: z.string(),
	campaign_id: z.string().nullable(),
	step_index: z.number().nullable().describe('The campaign step that sent it (null: sent by hand)'),
	direction: z.enum(MESSAGE_DIRECTIONS),
	status: z
		.string()
		.describe(
			`outbound: ${OUTBOUND_STATUSES.join(', ')}; inbound: ${INBOUND_STATUSES.join(', ')} (the service may add others)`,
		),
	body: z.string(),
	created_at: time('Sent or received').optional(),
});

const StepAnalytics = z.object({
	step_index: z.number(),
	type: z.string(),
	sent: z.number(),
	replied: z.number(),
	reply_rate: z.number(),
});

export const AnalyticsItem = z.object({
	campaign_id: z.string(),
	leads_total: z.number(),
	connection_requests_sent: z.number(),
	connections_accepted: z.number(),
	connection_rate: z.number(),
	messages_sent: z.number(),
	replies: z.number(),
	reply_rate: z.number(),
	steps: z.array(StepAnalytics),
});

/** What an option makes the node say it did; absent when the option is off. */
const outcome = (values: [string, ...string[]], option: string) =>
	z.enum(values).optional().describe(`What the node did (with ${option})`);

export const DeleteItem = z.object({
	id: id('deleted lead'),
	deleted: z.boolean().describe('false when the lead was not found (Succeed If Not Found)'),
	outcome: outcome(['deleted', 'notFound'], 'Succeed If Not Found'),
});

/** Every operation's output item, by resource and operation value, as the editor asks for them. */
export const OPERATION_ITEMS = {
	lead: {
		create: LeadItem,
		upsert: LeadItem.extend({
			outcome: z.enum(['created', 'updated', 'unchanged']).describe('What Create or Update did'),
		}),
		delete: DeleteItem,
		get: LeadItem,
		getAll: LeadItem,
		update: LeadItem,
	},
	campaign: {
		create: CampaignItem.extend({
			outcome: outcome(
				['created', 'existing'],
				'If a Campaign Has This Name: Use Existing or Fail',
			),
		}),
		get: CampaignItem,
		getAnalytics: AnalyticsItem,
		getAll: CampaignItem,
		pause: CampaignItem.extend({
			outcome: outcome(['paused', 'unchanged'], 'Succeed If Already Paused'),
		}),
		start: CampaignItem.extend({
			outcome: outcome(['started', 'unchanged'], 'Succeed If Already Active'),
		}),
	},
	message: {
		get: MessageItem,
		getAll: MessageItem,
		send: MessageItem.extend({
			outcome: outcome(['sent', 'skipped'], 'Skip If Already Sent'),
		}),
	},
} as const;

/** The trigger emits each new message as the service lists it. */
export const TRIGGER_ITEM = MessageItem;

// The sandbox's own types and these schemas describe the same resources: a field added to one and not
// the other fails the type check (a lead's custom fields aside, which the node passes through as sent).
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Known<T> = { [K in keyof T as string extends K ? never : K]: T[K] };
const agree = <T extends true>(): T | undefined => undefined;
agree<Same<z.infer<typeof LeadItem>, Known<Lead>>>();
agree<Same<z.infer<typeof MessageItem>, Message>>();
agree<Same<z.infer<typeof AnalyticsItem>, CampaignAnalytics>>();
agree<Same<keyof z.infer<typeof CampaignItem>, keyof Campaign>>();
