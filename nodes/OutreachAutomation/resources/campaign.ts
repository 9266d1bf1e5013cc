import type { IDataObject, INodeProperties } from 'n8n-workflow';
import type { ItemParameters } from '../shared/parameters';

import { optionsCollection } from '../shared/filters';
import { locator } from '../shared/locator';
import { assignFilled, invalid, param, prototypeKey, requiredId, text } from '../shared/parameters';
import { defineResource, emptyBody, httpStatusOf, passOn, type ItemRun } from './table';

const CUSTOM_TYPE = '__custom';

// n8n reads "{{" as the start of an expression, so inside one the literal needs its braces printed.
const NOTE_HINT =
	'Sent as written: the service puts each lead\'s first name in place of {{firstName}}. In an expression, write {{ "{{" }}firstName}} to keep it literal.';

/** The step builder's entries, in the order the user sorted them, as the API's steps. */
function builtSteps(ctx: ItemParameters): IDataObject[] {
	const entries = (param<IDataObject>(ctx, 'steps', {}).step ?? []) as IDataObject[];
	return entries.map((entry, index) => {
		const position = `Steps: step ${index + 1}`;
		if (entry.type === 'message') {
			const body = String(entry.body ?? '');
			if (!body.trim()) invalid(ctx, `${position} (Message) has no Body`);
			const delay = Number(entry.delayDays ?? 0);
			if (!Number.isInteger(delay) || delay < 0) {
				invalid(
					ctx,
					`${position} (Message): Delay Days must be a whole number of 0 or more, not ${entry.delayDays}`,
				);
			}
			return { type: 'message', delay_days: delay, body };
		}
		const step: IDataObject = { type: 'connection_request' };
		if (typeof entry.note === 'string' && entry.note !== '') step.note = entry.note;
		return step;
	});
}

/** Raw JSON steps, for step types the builder does not know. */
function jsonSteps(ctx: ItemParameters): IDataObject[] {
	let steps = param<unknown>(ctx, 'stepsJson', '[]');
	if (typeof steps === 'string') {
		try {
			steps = JSON.parse(steps);
		} catch (error) {
			invalid(ctx, `Steps (JSON) is not valid JSON: ${(error as Error).message}`);
		}
	}
	if (!Array.isArray(steps))
		invalid(ctx, 'Steps (JSON) must be an array of steps, e.g. [{"type": "connection_request"}]');
	(steps as unknown[]).forEach((step, index) => {
		if (typeof step !== 'object' || step === null || Array.isArray(step)) {
			invalid(ctx, `Steps (JSON): step ${index + 1} must be an object`);
		}
		if (typeof (step as IDataObject).type !== 'string' || !(step as IDataObject).type) {
			invalid(ctx, `Steps (JSON): step ${index + 1} has no "type"`);
		}
		const key = prototypeKey(step);
		if (key) invalid(ctx, `Steps (JSON): step ${index + 1} uses "${key}", which cannot be a key`);
	});
	return steps as IDataObject[];
}

function createBody(ctx: ItemParameters): IDataObject {
	const name = text(ctx, 'name', 'Name');
	if (!name) invalid(ctx, 'Name is empty', 'Give the campaign a name.');
	let type = text(ctx, 'campaignType', 'Type') || 'connection_message';
	if (type === CUSTOM_TYPE) {
		type = text(ctx, 'customType', 'Custom Type');
		if (!type) invalid(ctx, 'Custom Type is empty', 'Enter the campaign type the service expects.');
	}
	const steps =
		param<string>(ctx, 'stepsMode', 'builder') === 'json' ? jsonSteps(ctx) : builtSteps(ctx);
	if (!steps.length) invalid(ctx, 'A campaign needs at least one step', 'Add a step under Steps.');
	return assignFilled(
		{ name, type, steps },
		{ lead_list_id: text(ctx, 'leadListId', 'Lead List ID') },
	);
}

/**
 * Create, unless "If a Campaign Has This Name" says otherwise: reads every campaign first and uses the
 * one with the same name (exact, after trimming, as the name is sent), or fails. Items of one run with
 * the same name go one after the other, so the second finds the first's campaign.
 */
async function create(item: ItemRun): Promise<IDataObject[]> {
	const ifTaken = param<unknown>(item.parameters, 'ifNameTaken', 'useExisting');
	if (ifTaken === 'create') return await item.send();
	if (ifTaken !== 'useExisting' && ifTaken !== 'fail') {
		// Not the option values in the message: n8n rewrites any message containing "EEXIST".
		invalid(
			item.parameters,
			`If a Campaign Has This Name is not one of its options: ${String(JSON.stringify(ifTaken)).slice(0, 40)}`,
			'Choose Use Existing, Create Another or Fail.',
		);
	}
	const body = createBody(item.parameters);
	const name = String(body.name);
	return await item.exclusive(name, async () => {
		const same = (await item.readAll('/campaigns')).filter(
			(campaign) => typeof campaign.name === 'string' && campaign.name.trim() === name,
		);
		const ids = same.map((campaign) => String(campaign.id)).join(', ');
		if (same.length > 1) {
			invalid(
				item.parameters,
				`${same.length} campaigns are named "${name}" (${ids}): cannot tell which to use`,
				'Rename or delete the extra ones in Outreach Automation, or set "If a Campaign Has This Name" to "Create Another".',
			);
		}
		if (same.length === 1) {
			if (ifTaken === 'fail') {
				invalid(
					item.parameters,
					`A campaign named "${name}" already exists (${ids})`,
					'Nothing was created. Choose another name, or set "If a Campaign Has This Name" to "Use Existing".',
				);
			}
			return [{ ...same[0], outcome: 'existing' }];
		}
		const created = await item.send({ body });
		return created.map((campaign) => ({ ...campaign, outcome: 'created' }));
	});
}

/**
 * Start or Pause, with Options > Succeed If Already Active/Paused: the service refuses (409) a campaign
 * already in that state; then the campaign is read, and only when it really is in that state is it
 * output with outcome "unchanged". Any other refusal stays an error.
 */
function changeState(option: string, wanted: string, outcome: string) {
	return async (item: ItemRun): Promise<IDataObject[]> => {
		if (param<IDataObject>(item.parameters, 'options', {})[option] !== true)
			return await item.send();
		try {
			return (await item.send()).map((campaign) => ({ ...campaign, outcome }));
		} catch (error) {
			if (httpStatusOf(error) !== 409) passOn(item.parameters.getNode(), error);
			const id = requiredId(item.parameters, 'campaignId', 'Campaign ID');
			const current = (await item.request('GET', `/campaigns/${encodeURIComponent(id)}`)) as
				| IDataObject
				| undefined;
			if (current?.status !== wanted) passOn(item.parameters.getNode(), error);
			return [{ ...current, outcome: 'unchanged' }];
		}
	};
}

function stateOptions(name: string, displayName: string, state: string): INodeProperties {
	return optionsCollection([
		{
			displayName,
			name,
			type: 'boolean',
			default: false,
			description: `Whether a campaign that is already ${state} counts as done (output with outcome "unchanged") instead of an error. When the service refuses, the campaign is read (one more request) to check its status.`,
		},
	]);
}

const campaignId = { parameter: 'campaignId', label: 'Campaign ID' };

const campaignPicker: INodeProperties = locator({
	name: 'campaignId',
	displayName: 'Campaign',
	kind: 'campaign',
	required: true,
	description: 'The campaign to work on. Choose from the list, or specify an ID.',
});

const nameField: INodeProperties = {
	displayName: 'Name',
	name: 'name',
	type: 'string',
	required: true,
	default: '',
	placeholder: 'e.g. Q3 founders outreach',
};

const ifNameTakenField: INodeProperties = {
	displayName: 'If a Campaign Has This Name',
	name: 'ifNameTaken',
	type: 'options',
	default: 'useExisting',
	description:
		'What to do when a campaign with exactly this name (spaces around it aside; upper and lower case differ) already exists. Checking reads the list of campaigns.',
	options: [
		{
			name: 'Create Another',
			value: 'create',
			description: 'Create a new campaign with the same name (no check)',
		},
		{
			name: 'Fail',
			value: 'fail',
			description: 'Stop with an error naming the campaign; nothing is created',
		},
		{
			name: 'Use Existing',
			value: 'useExisting',
			description:
				'Output that campaign, unchanged, with outcome "existing" (a new one: "created"), so running the workflow again creates nothing',
		},
	],
};

const campaignTypeField: INodeProperties = {
	displayName: 'Type',
	name: 'campaignType',
	type: 'options',
	default: 'connection_message',
	options: [
		{
			name: 'Connection + Messages',
			value: 'connection_message',
			description: 'A connection request followed by messages (connection_message)',
		},
		{
			name: 'Custom',
			value: CUSTOM_TYPE,
			description: 'Another type your service supports',
		},
	],
};

const customTypeField: INodeProperties = {
	displayName: 'Custom Type',
	name: 'customType',
	type: 'string',
	required: true,
	default: '',
	placeholder: 'e.g. inmail_sequence',
	displayOptions: { show: { campaignType: [CUSTOM_TYPE] } },
};

const leadListIdField: INodeProperties = {
	displayName: 'Lead List ID',
	name: 'leadListId',
	type: 'string',
	default: '',
	description: 'The list of leads the campaign targets (leads created with this Lead List ID)',
};

const stepsModeField: INodeProperties = {
	displayName: 'Steps Input',
	name: 'stepsMode',
	type: 'options',
	default: 'builder',
	options: [
		{ name: 'Step Builder', value: 'builder', description: 'Connection requests and messages' },
		{
			name: 'JSON',
			value: 'json',
			description: 'Raw steps, for step types the builder does not offer',
		},
	],
};

const stepsField: INodeProperties = {
	displayName: 'Steps',
	name: 'steps',
	type: 'fixedCollection',
	placeholder: 'Add Step',
	default: {},
	typeOptions: { multipleValues: true, sortable: true },
	displayOptions: { show: { stepsMode: ['builder'] } },
	description: 'Run in this order; drag to reorder',
	options: [
		{
			displayName: 'Step',
			name: 'step',
			values: [
				{
					displayName: 'Step Type',
					name: 'type',
					type: 'options',
					default: 'connection_request',
					options: [
						{ name: 'Connection Request', value: 'connection_request' },
						{ name: 'Message', value: 'message' },
					],
				},
				{
					displayName: 'Note',
					name: 'note',
					type: 'string',
					default: '',
					typeOptions: { rows: 3 },
					placeholder: 'e.g. Hi {{firstName}}, great to connect!',
					hint: NOTE_HINT,
					description: 'Text sent with the connection request',
					displayOptions: { show: { type: ['connection_request'] } },
				},
				{
					displayName: 'Delay Days',
					name: 'delayDays',
					type: 'number',
					default: 1,
					typeOptions: { minValue: 0, numberPrecision: 0 },
					description: 'Days to wait after the previous step',
					displayOptions: { show: { type: ['message'] } },
				},
				{
					displayName: 'Body',
					name: 'body',
					type: 'string',
					default: '',
					typeOptions: { rows: 4 },
					description: 'Text of the message',
					displayOptions: { show: { type: ['message'] } },
				},
			],
		},
	],
};

const stepsJsonField: INodeProperties = {
	displayName: 'Steps (JSON)',
	name: 'stepsJson',
	type: 'json',
	default:
		'[\n  { "type": "connection_request", "note": "Hi {{firstName}}" },\n  { "type": "message", "delay_days": 2, "body": "Thanks for connecting!" }\n]',
	description: 'An array of steps as the API takes them; any step type the service supports',
	displayOptions: { show: { stepsMode: ['json'] } },
};

export const campaign = defineResource({
	value: 'campaign',
	name: 'Campaign',
	defaultOperation: 'create',
	operations: [
		{
			name: 'Create',
			value: 'create',
			action: 'Create a campaign',
			description: 'Create a campaign (as a draft) with its steps',
			toolDescription:
				'Creates a new campaign as a draft: a name, a type, the lead list it targets and its steps (connection requests and messages). Returns the campaign as JSON, with its ID. If a campaign with the same name already exists, returns that one unchanged instead (outcome "existing"), unless set otherwise. Nothing is sent until the campaign is started.',
			method: 'POST',
			path: '/campaigns',
			body: createBody,
			safeToRepeat: false,
			run: create,
			fields: [
				nameField,
				ifNameTakenField,
				campaignTypeField,
				customTypeField,
				leadListIdField,
				stepsModeField,
				stepsField,
				stepsJsonField,
			],
		},
		{
			name: 'Get',
			value: 'get',
			action: 'Get a campaign',
			description: 'Get a campaign by ID',
			toolDescription:
				'Looks up one campaign by its ID. Returns it as JSON: name, type, status (draft, active or paused), lead list and steps. Read-only.',
			method: 'GET',
			path: '/campaigns/{id}',
			id: campaignId,
			safeToRepeat: true,
			fields: [campaignPicker],
		},
		{
			name: 'Get Analytics',
			value: 'getAnalytics',
			action: 'Get analytics of a campaign',
			description: 'Get connection rate, reply rate and per-step metrics',
			toolDescription:
				'Reads how one campaign (by ID) is doing. Returns its connection rate, reply rate and per-step metrics as JSON. Read-only.',
			method: 'GET',
			path: '/campaigns/{id}/analytics',
			id: campaignId,
			safeToRepeat: true,
			fields: [campaignPicker],
		},
		{
			name: 'Get Many',
			value: 'getAll',
			action: 'Get many campaigns',
			description: 'List campaigns',
			toolDescription:
				"Lists the account's campaigns. Returns one JSON object per campaign (ID, name, status, steps), at most Limit of them (10 unless set otherwise). Read-only.",
			method: 'GET',
			path: '/campaigns',
			list: true,
			safeToRepeat: true,
		},
		{
			name: 'Pause',
			value: 'pause',
			action: 'Pause a campaign',
			description: 'Pause an active campaign',
			toolDescription:
				'Pauses an active campaign, found by its ID: it stops sending connection requests and messages until it is started again. Returns the campaign as JSON with its new status. A campaign that is not active is refused with an error (unless Succeed If Already Paused is on and it is paused).',
			method: 'POST',
			path: '/campaigns/{id}/pause',
			id: campaignId,
			body: emptyBody,
			safeToRepeat: false,
			fields: [
				campaignPicker,
				stateOptions('succeedIfPaused', 'Succeed If Already Paused', 'paused'),
			],
			run: changeState('succeedIfPaused', 'paused', 'paused'),
		},
		{
			name: 'Start',
			value: 'start',
			action: 'Start a campaign',
			description: 'Start a draft or paused campaign',
			toolDescription:
				"Starts a draft or paused campaign, found by its ID. Side effect: the service begins sending real connection requests and messages to the campaign's leads. Returns the campaign as JSON with its new status. An active campaign is refused with an error (unless Succeed If Already Active is on).",
			method: 'POST',
			path: '/campaigns/{id}/start',
			id: campaignId,
			body: emptyBody,
			safeToRepeat: false,
			fields: [
				campaignPicker,
				stateOptions('succeedIfActive', 'Succeed If Already Active', 'active'),
			],
			run: changeState('succeedIfActive', 'active', 'started'),
		},
	],
});
