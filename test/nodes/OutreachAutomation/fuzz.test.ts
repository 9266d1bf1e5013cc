/**
 * Seeded hostile input into every parameter of every operation, through n8n's engine against the
 * sandbox. Each case is one input item whose values reach the parameters through expressions (so
 * they may resolve to undefined, null, numbers, objects...), many cases per execution with Continue
 * On Fail. Counted: uncaught errors, requests outside the operation's endpoint (the sandbox's log),
 * refusals that do not name a field. FUZZ_SEED / FUZZ_CASES change the seed and the case count.
 */
import type {
	IDataObject,
	INodeExecutionData,
	INodeParameters,
	NodeParameterValueType,
} from 'n8n-workflow';

import { runNode, TriggerHarness } from '../../engine/harness';
import { Random } from '../../sandbox/random';
import { startSandbox, type Sandbox } from '../../sandbox/server';

const SEED = Number(process.env.FUZZ_SEED ?? 20261123);
const CASES_PER_EXECUTION = 185;
/** Executions per operation and parameter shape: 15 operations x 2 shapes x 185 = 5,550 cases. */
const EXECUTIONS = Math.max(1, Math.round(Number(process.env.FUZZ_CASES ?? 5180) / 5180));
const TRIGGER_POLLS = 150;
const KEY = 'fuzz-key-51c0ffee';

const LONG = 'x'.repeat(5_000);
const STRINGS = [
	'',
	' ',
	'.',
	'..',
	' .. ',
	'/',
	'../../campaigns',
	'a/b',
	'?page=2',
	'#top',
	'%',
	'%2e%2e',
	'%00',
	'ld_1',
	'cmp_1',
	'msg_1',
	'日本語-🙂',
	'\u202eevil',
	'\u0000\u0007\r\n\t',
	'\u200b',
	LONG,
	'x'.repeat(500),
	'{{ $json }}',
	'={{ 1 + 1 }}',
	'<script>alert(1)</script>',
	'__proto__',
	'constructor',
	'prototype',
	'{"a":1}',
	'[{"type":"message","body":"hi"}]',
	'[{"type":"x","__proto__":{"polluted":1}}]',
	'[1,2',
	'null',
	'undefined',
	'https://www.linkedin.com/in/ada',
	'javascript:alert(1)',
	'message',
	'connection_request',
	'__custom',
	'json',
	'builder',
];
const OTHERS: unknown[] = [
	0,
	-1,
	1.5,
	1e21,
	Number.MAX_SAFE_INTEGER,
	true,
	false,
	null,
	[],
	[1, 'a', null],
	{},
	{ a: { b: { c: [1, { d: 'e' }] } } },
	{ __rl: true, mode: 'id', value: '..' },
	JSON.parse('{"__proto__": {"polluted": true}}'),
	{ constructor: { prototype: { polluted: true } } },
	{ field: [{ name: '__proto__', value: 'x' }] },
	{ field: { name: 'a', value: 'b' } },
	{ step: [{ type: 'message', body: 'hi', delayDays: -3 }] },
	{ step: 'not a list' },
	[{ type: 'message', body: 'hi' }],
];

/** A value for one parameter: absent (undefined in the expression), hostile, or sometimes ordinary. */
function value(random: Random): unknown {
	const roll = random.next();
	if (roll < 0.1) return undefined;
	if (roll < 0.6) return random.pick(STRINGS);
	if (roll < 0.85) return random.pick(OTHERS);
	return `${random.pick(['a', 'Ada', 'ld_', 'x y'])}${random.int(0, 99)}`;
}

const at = (path: string) => `={{ $json.p[${JSON.stringify(path)}] }}`;
const locatorAt = (path: string) => ({ __rl: true, mode: 'id', value: at(path) });

interface Operation {
	resource: string;
	operation: string;
	/** Parameters whose leaves read the case's values; `whole`: collections as one expression each. */
	parameters: (whole: boolean) => INodeParameters;
	/** Every path this operation may reach. */
	endpoint: RegExp;
	method: string;
	/** Paths it may also read with GET (an operation that checks before it writes). */
	reads?: RegExp;
	/** When the operation sends several kinds of request (Create or Update: GET, POST, PATCH). */
	methods?: string[];
	/** Words a refusal may name: field labels and parameter names. */
	fields: string[];
}

const leadValues = (prefix: string) => ({
	firstName: at(`${prefix}firstName`),
	lastName: at(`${prefix}lastName`),
	company: at(`${prefix}company`),
	title: at(`${prefix}title`),
	linkedinUrl: at(`${prefix}linkedinUrl`),
	leadListId: at(`${prefix}leadListId`),
	campaignId: at(`${prefix}campaignId`),
	customFields: {
		field: [
			{ name: at(`${prefix}cf1.name`), value: at(`${prefix}cf1.value`) },
			{ name: at(`${prefix}cf2.name`), value: at(`${prefix}cf2.value`) },
		],
	},
});
const LEAD_FIELDS = [
	'First Name',
	'Last Name',
	'Company',
	'Title',
	'LinkedIn Profile URL',
	'Lead List ID',
	'Campaign ID',
	'Custom Fields',
	'Additional Fields',
	'Update Fields',
	'additionalFields',
	'updateFields',
	'A lead needs at least one field',
];
const ID = '[^/]+';
const list = (returnAll: string, limit: string) => ({ returnAll: at(returnAll), limit: at(limit) });
const LIST_FIELDS = ['Return All', 'Limit', 'returnAll', 'limit', 'Filters', 'filters'];

const OPERATIONS: Operation[] = [
	{
		resource: 'lead',
		operation: 'create',
		method: 'POST',
		endpoint: /^\/api\/v1\/leads$/,
		parameters: (whole) => {
			const { firstName, lastName, company, title, linkedinUrl, ...more } = leadValues('');
			return {
				firstName,
				lastName,
				company,
				title,
				linkedinUrl,
				additionalFields: whole ? at('additionalFields') : more,
			};
		},
		fields: LEAD_FIELDS,
	},
	{
		resource: 'lead',
		operation: 'upsert',
		method: 'POST',
		methods: ['GET', 'POST', 'PATCH'],
		endpoint: new RegExp(`^/api/v1/leads(/${ID})?$`),
		parameters: (whole) => {
			const { firstName, lastName, company, title, linkedinUrl, ...more } = leadValues('');
			return {
				firstName,
				lastName,
				company,
				title,
				linkedinUrl,
				additionalFields: whole ? at('additionalFields') : more,
			};
		},
		fields: LEAD_FIELDS,
	},
	{
		resource: 'lead',
		operation: 'get',
		method: 'GET',
		endpoint: new RegExp(`^/api/v1/leads/${ID}$`),
		parameters: () => ({ leadId: locatorAt('id') }),
		fields: ['Lead ID'],
	},
	{
		resource: 'lead',
		operation: 'getAll',
		method: 'GET',
		endpoint: /^\/api\/v1\/leads$/,
		parameters: (whole) => ({
			...list('returnAll', 'limit'),
			filters: whole ? at('filters') : { search: at('search'), campaignId: locatorAt('cid') },
		}),
		fields: [...LIST_FIELDS, 'Search', 'Campaign'],
	},
	{
		resource: 'lead',
		operation: 'update',
		method: 'PATCH',
		endpoint: new RegExp(`^/api/v1/leads/${ID}$`),
		parameters: (whole) => ({
			leadId: locatorAt('id'),
			updateFields: whole ? at('updateFields') : leadValues('u.'),
		}),
		fields: ['Lead ID', ...LEAD_FIELDS],
	},
	{
		resource: 'lead',
		operation: 'delete',
		method: 'DELETE',
		endpoint: new RegExp(`^/api/v1/leads/${ID}$`),
		parameters: () => ({ leadId: locatorAt('id') }),
		fields: ['Lead ID'],
	},
	{
		resource: 'campaign',
		operation: 'create',
		method: 'POST',
		endpoint: /^\/api\/v1\/campaigns$/,
		reads: /^\/api\/v1\/campaigns$/,
		parameters: (whole) => ({
			name: at('name'),
			ifNameTaken: at('ifNameTaken'),
			campaignType: at('campaignType'),
			customType: at('customType'),
			leadListId: at('leadListId'),
			stepsMode: at('stepsMode'),
			steps: whole
				? at('steps')
				: {
						step: [
							{
								type: at('s1.type'),
								note: at('s1.note'),
								delayDays: at('s1.delay'),
								body: at('s1.body'),
							},
							{
								type: at('s2.type'),
								note: at('s2.note'),
								delayDays: at('s2.delay'),
								body: at('s2.body'),
							},
						],
					},
			stepsJson: at('stepsJson'),
		}),
		fields: [
			'Name',
			'If a Campaign Has This Name',
			'Type',
			'campaignType',
			'Custom Type',
			'Lead List ID',
			'Steps',
			'stepsMode',
			'Steps Input',
			'A campaign needs at least one step',
		],
	},
	...['get', 'getAnalytics', 'start', 'pause'].map(
		(operation): Operation => ({
			resource: 'campaign',
			operation,
			method: operation === 'start' || operation === 'pause' ? 'POST' : 'GET',
			endpoint: new RegExp(
				`^/api/v1/campaigns/${ID}${operation === 'get' ? '' : `/${operation === 'getAnalytics' ? 'analytics' : operation}`}$`,
			),
			parameters: () => ({ campaignId: locatorAt('id') }),
			fields: ['Campaign ID'],
		}),
	),
	{
		resource: 'campaign',
		operation: 'getAll',
		method: 'GET',
		endpoint: /^\/api\/v1\/campaigns$/,
		parameters: () => list('returnAll', 'limit'),
		fields: LIST_FIELDS,
	},
	{
		resource: 'message',
		operation: 'send',
		method: 'POST',
		endpoint: /^\/api\/v1\/messages$/,
		reads: /^\/api\/v1\/messages$/,
		parameters: () => ({
			leadId: locatorAt('leadId'),
			body: at('body'),
			options: { skipIfAlreadySent: at('skip') },
		}),
		fields: ['Lead', 'Body'],
	},
	{
		resource: 'message',
		operation: 'get',
		method: 'GET',
		endpoint: new RegExp(`^/api/v1/messages/${ID}$`),
		parameters: () => ({ messageId: at('id') }),
		fields: ['Message ID'],
	},
	{
		resource: 'message',
		operation: 'getAll',
		method: 'GET',
		endpoint: /^\/api\/v1\/messages$/,
		parameters: (whole) => ({
			...list('returnAll', 'limit'),
			filters: whole
				? at('filters')
				: { status: at('status'), campaignId: locatorAt('cid'), leadId: locatorAt('lid') },
		}),
		fields: [...LIST_FIELDS, 'Status', 'Campaign', 'Lead'],
	},
];

/** Every path a parameter set reads, from its expressions. */
function paths(parameters: unknown, out: string[] = []): string[] {
	if (typeof parameters === 'string') {
		const match = /\$json\.p\[("[^"]+")\]/.exec(parameters);
		if (match) out.push(JSON.parse(match[1]) as string);
	} else if (typeof parameters === 'object' && parameters !== null) {
		for (const inner of Object.values(parameters)) paths(inner, out);
	}
	return out;
}

/** Messages of crashes rather than refusals: a TypeError and the like reaching the user. */
const CRASH =
	/is not a function|is not iterable|Cannot read prop|Cannot set prop|Cannot convert|undefined is not|null is not|Maximum call stack|is not defined|\[object Object\]/;

interface Tally {
	cases: number;
	succeeded: number;
	refusedBeforeSending: number;
	refusedByService: number;
	uncaught: string[];
	outside: string[];
	unnamed: string[];
	requests: number;
}

describe(`fuzz: hostile values into every parameter (seed ${SEED})`, () => {
	let sandbox: Sandbox;
	const random = new Random(SEED);
	const tally: Tally = {
		cases: 0,
		succeeded: 0,
		refusedBeforeSending: 0,
		refusedByService: 0,
		uncaught: [],
		outside: [],
		unnamed: [],
		requests: 0,
	};

	beforeAll(async () => {
		sandbox = await startSandbox({
			apiKeys: [KEY],
			// What is counted is where requests go, not pacing: a limit the run never reaches.
			rateLimit: 1_000_000,
			seed: { leads: 5, campaigns: 3, messages: 5 },
		});
	});
	afterAll(async () => {
		await sandbox.stop();
		// The figures for the README's Reliability section.
		// eslint-disable-next-line no-console
		console.log(
			`fuzz seed ${SEED}: ${JSON.stringify({ ...tally, uncaught: tally.uncaught.length, outside: tally.outside.length, unnamed: tally.unnamed.length })}`,
		);
	});

	it.each(OPERATIONS.map((op) => [`${op.resource} ${op.operation}`, op] as const))(
		'%s',
		async (_name, op) => {
			const before = {
				...tally,
				uncaught: tally.uncaught.length,
				outside: tally.outside.length,
				unnamed: tally.unnamed.length,
			};
			for (const whole of [false, true]) {
				const parameters = op.parameters(whole);
				const read = paths(parameters);
				for (let execution = 0; execution < EXECUTIONS; execution++) {
					sandbox.reset({ leads: 5, campaigns: 3, messages: 5 });
					const cases: IDataObject[] = [];
					for (let i = 0; i < CASES_PER_EXECUTION; i++) {
						const p: IDataObject = {};
						for (const path of read) {
							const v = value(random);
							if (v !== undefined) p[path] = v as IDataObject[string];
						}
						cases.push({ p });
					}
					const since = sandbox.requests().length;
					const result = await runNode(
						{ baseUrl: sandbox.url, apiKey: KEY },
						{ resource: op.resource, operation: op.operation, ...parameters },
						cases,
						{ continueOnFail: true },
					);
					tally.cases += cases.length;
					if (result.error) tally.uncaught.push(`${_name}: ${result.error.message}`);
					check(op, result.items, tally);
					const sent = sandbox.requests().slice(since);
					tally.requests += sent.length;
					for (const request of sent) {
						const methods = op.methods ?? [op.method];
						const read = request.method === 'GET' && op.reads?.test(request.path);
						if (!read && (!methods.includes(request.method) || !op.endpoint.test(request.path))) {
							tally.outside.push(`${_name}: ${request.method} ${request.path.slice(0, 80)}`);
						}
					}
					expect(Object.prototype).not.toHaveProperty('polluted');
				}
			}
			expect(tally.uncaught.slice(before.uncaught)).toEqual([]);
			expect(tally.outside.slice(before.outside)).toEqual([]);
			expect(tally.unnamed.slice(before.unnamed)).toEqual([]);
		},
	);

	it('the trigger: hostile filters only ever read the message list', async () => {
		const since = sandbox.requests().length;
		for (let i = 0; i < TRIGGER_POLLS; i++) {
			const filters: IDataObject = {};
			for (const name of ['status', 'campaignId', 'leadId']) {
				const v = value(random);
				if (v === undefined) continue;
				filters[name] =
					name === 'status' ? (v as string) : { __rl: true, mode: 'id', value: v as string };
			}
			const trigger = new TriggerHarness(
				{ baseUrl: sandbox.url, apiKey: KEY },
				{
					filters: filters as NodeParameterValueType,
					options: { emitExisting: random.chance(0.5) },
				},
			);
			tally.cases++;
			try {
				await trigger.poll(random.chance(0.5) ? 'manual' : 'trigger');
				tally.succeeded++;
			} catch (error) {
				const message = (error as Error).message;
				if (CRASH.test(message) || !(error as { name?: string }).name?.startsWith('Node')) {
					tally.uncaught.push(`trigger: ${message}`);
				}
			}
		}
		const sent = sandbox.requests().slice(since);
		tally.requests += sent.length;
		for (const request of sent) {
			if (request.method !== 'GET' || request.path !== '/api/v1/messages') {
				tally.outside.push(`trigger: ${request.method} ${request.path}`);
			}
		}
		expect(tally.uncaught.filter((m) => m.startsWith('trigger'))).toEqual([]);
		expect(tally.outside.filter((m) => m.startsWith('trigger'))).toEqual([]);
	});

	it('ran at least 5,000 cases, none uncaught, none outside its endpoint, every refusal naming its field', () => {
		expect(tally.cases).toBeGreaterThanOrEqual(5000);
		expect([...new Set(tally.uncaught)]).toEqual([]);
		expect([...new Set(tally.outside)]).toEqual([]);
		expect([...new Set(tally.unnamed)]).toEqual([]);
		// Not vacuous: some cases got through, some were refused before sending, some by the service.
		expect(tally.succeeded).toBeGreaterThan(100);
		expect(tally.refusedBeforeSending).toBeGreaterThan(1000);
		expect(tally.refusedByService).toBeGreaterThan(10);
	});
});

function check(op: Operation, items: INodeExecutionData[], tally: Tally): void {
	const name = `${op.resource} ${op.operation}`;
	for (const item of items) {
		const error = item.error as
			| (Error & { httpCode?: string | null; description?: string })
			| undefined;
		if (!error) {
			tally.succeeded++;
			continue;
		}
		const message = String(error.message ?? '');
		if (CRASH.test(`${message} ${error.description ?? ''}`)) {
			tally.uncaught.push(`${name}: ${message.slice(0, 200)}`);
			continue;
		}
		if (error.name === 'NodeApiError' && error.httpCode && /^[45]\d\d$/.test(error.httpCode)) {
			tally.refusedByService++;
			continue;
		}
		tally.refusedBeforeSending++;
		const lower = message.toLowerCase();
		if (!op.fields.some((field) => lower.includes(field.toLowerCase()))) {
			tally.unnamed.push(`${name}: ${message.slice(0, 200)}`);
		}
	}
}
