import type { IDataObject, INodeProperties } from 'n8n-workflow';
import type { ItemParameters } from '../shared/parameters';

import { filtersCollection, optionsCollection } from '../shared/filters';
import { locator } from '../shared/locator';
import { messageFilterOptions, messageFilterQuery } from '../shared/messageFilters';
import { invalid, param, requiredId } from '../shared/parameters';
import { defineResource, type ItemRun } from './table';

function sendBody(ctx: ItemParameters): IDataObject {
	const leadId = requiredId(ctx, 'leadId', 'Lead');
	const body = param<unknown>(ctx, 'body', '');
	if (typeof body !== 'string' || !body.trim())
		invalid(ctx, 'Body is empty', 'Write the text of the message.');
	return { lead_id: leadId, body };
}

/** Statuses of a message that did not reach the lead: such a message does not count as sent. */
const FAILED_STATUSES = new Set(['failed', 'error', 'bounced', 'rejected', 'undelivered']);

/**
 * A message's text as Skip If Already Sent compares it: Unicode-normalised (NFC), every run of white
 * space (spaces, tabs, line ends of any kind) as one space, none around it. A service may store a body
 * with its line ends or spaces normalised; the words and their order are what make it the same text.
 */
export function comparableText(text: string): string {
	return text.normalize('NFC').replace(/\s+/g, ' ').trim();
}

/** Whether `message` is an earlier send to `leadId` that did not fail, and its comparable text. */
function sentText(message: IDataObject, leadId: string): string | undefined {
	if (message.lead_id !== undefined && String(message.lead_id) !== leadId) return undefined;
	if (message.direction === 'inbound' || typeof message.body !== 'string') return undefined;
	if (FAILED_STATUSES.has(String(message.status ?? '').toLowerCase())) return undefined;
	return comparableText(message.body);
}

/**
 * What the items of one node run know of each lead's messages: read once per lead while items of that
 * lead are running (dropped when the last is done), and every message this run sent or matched, by lead
 * and text (the output item itself, which n8n keeps anyway), so a list lagging behind its writes cannot
 * make a second item send it again.
 */
interface SendMemory {
	leads: Map<string, { items: number; texts?: Promise<Map<string, IDataObject>> }>;
	done: Map<string, IDataObject>;
}

/**
 * Send, with Options > Skip If Already Sent: reads the lead's messages first (its pages, then at most
 * the send) and outputs the earlier message instead of sending the same text again. Items of one run
 * with the same lead go one after the other, so the second sees the first's message.
 */
async function send(item: ItemRun): Promise<IDataObject[]> {
	const options = param<IDataObject>(item.parameters, 'options', {});
	if (options.skipIfAlreadySent !== true) return await item.send();
	const body = sendBody(item.parameters);
	const leadId = String(body.lead_id);
	const text = comparableText(String(body.body));
	const memory = item.shared<SendMemory>(() => ({ leads: new Map(), done: new Map() }));
	const lead = memory.leads.get(leadId) ?? { items: 0 };
	memory.leads.set(leadId, lead);
	lead.items++;
	try {
		return await item.exclusive(leadId, async () => {
			const key = `${leadId}\n${text}`;
			let earlier = memory.done.get(key);
			if (!earlier) {
				lead.texts ??= item.readAll('/messages', { lead_id: leadId }).then((messages) => {
					const texts = new Map<string, IDataObject>();
					for (const message of messages) {
						const sent = sentText(message, leadId);
						if (sent !== undefined && !texts.has(sent)) texts.set(sent, message);
					}
					return texts;
				});
				// A failed read is not kept: the next item of this lead reads again.
				lead.texts.catch(() => (lead.texts = undefined));
				earlier = (await lead.texts).get(text);
			}
			if (earlier) {
				const skipped = { ...earlier, outcome: 'skipped' };
				memory.done.set(key, skipped);
				return [skipped];
			}
			const sent = (await item.send({ body })).map((message) => ({ ...message, outcome: 'sent' }));
			if (sent[0]) memory.done.set(key, sent[0]);
			return sent;
		});
	} finally {
		if (--lead.items === 0) memory.leads.delete(leadId);
	}
}

function listQuery(ctx: ItemParameters): IDataObject {
	return messageFilterQuery(param<IDataObject>(ctx, 'filters', {}));
}

const recipient: INodeProperties = locator({
	name: 'leadId',
	displayName: 'Lead',
	kind: 'lead',
	required: true,
	description: 'The lead who receives the message. Choose from the list, or specify an ID.',
});

const bodyField: INodeProperties = {
	displayName: 'Body',
	name: 'body',
	type: 'string',
	required: true,
	default: '',
	typeOptions: { rows: 4 },
	placeholder: 'e.g. Thanks for connecting, Ada!',
	description: 'Text of the message',
};

const messageIdField: INodeProperties = {
	displayName: 'Message ID',
	name: 'messageId',
	type: 'string',
	required: true,
	default: '',
	placeholder: 'e.g. msg_1a2b3c',
};

const sendOptions = optionsCollection([
	{
		displayName: 'Skip If Already Sent',
		name: 'skipIfAlreadySent',
		type: 'boolean',
		default: false,
		description:
			'Whether to read the lead\'s messages first and not send when one with the same text (white space and line ends aside) was sent before and did not fail. The output then is that message, with outcome "skipped" ("sent" otherwise). Costs one request per page of the lead\'s messages, once per lead while its items run.',
	},
]);

const listFilters = filtersCollection(messageFilterOptions('replied'));

export const message = defineResource({
	value: 'message',
	name: 'Message',
	defaultOperation: 'send',
	operations: [
		{
			name: 'Get',
			value: 'get',
			action: 'Get a message',
			description: 'Get a message by ID',
			toolDescription:
				'Looks up one message by its ID. Returns it as JSON: text, direction (outbound or inbound), status, lead ID and campaign ID. Read-only.',
			method: 'GET',
			path: '/messages/{id}',
			id: { parameter: 'messageId', label: 'Message ID' },
			safeToRepeat: true,
			fields: [messageIdField],
		},
		{
			name: 'Get Many',
			value: 'getAll',
			action: 'Get many messages',
			description: 'List messages, optionally filtered by lead, campaign or status',
			toolDescription:
				'Lists messages, newest first, optionally only those of one lead, one campaign or one status (e.g. replied). Returns one JSON object per message, at most Limit of them (10 unless set otherwise). Read-only.',
			method: 'GET',
			path: '/messages',
			query: listQuery,
			list: true,
			safeToRepeat: true,
			fields: [listFilters],
		},
		{
			name: 'Send',
			value: 'send',
			action: 'Send a message',
			description: 'Send a message to a lead',
			toolDescription:
				'Sends a real message with the given text to the lead with the given ID. Returns the message as JSON, with its ID and status. Side effect: the lead receives the message; calling it twice sends it twice, unless Skip If Already Sent is on (then the earlier message is returned with outcome "skipped").',
			method: 'POST',
			path: '/messages',
			body: sendBody,
			safeToRepeat: false,
			fields: [recipient, bodyField, sendOptions],
			run: send,
		},
	],
});
