/**
 * The output schemas against what the nodes really output: every operation (and the trigger) run inside
 * n8n's engine against the sandbox, each output item validated against its file under __schema__/ with no
 * field beyond those listed, and every field a file lists seen in some real item. So a field added to the
 * node's output or to a schema, and not to the other, fails here.
 */
import fs from 'node:fs';
import path from 'node:path';

import Ajv from 'ajv';
import type { IDataObject, INodeParameters } from 'n8n-workflow';

import { runNode, TriggerHarness } from '../../engine/harness';
import { startSandbox, type Sandbox } from '../../sandbox/server';
import { SCHEMA_DIR } from '../../tools/schemas';

type Schema = Record<string, unknown>;
const KEY = 'schema-key-41f2';
const rl = (value: string) => ({ __rl: true, mode: 'id', value });

/** The file as published, made closed: an object may hold only the fields it lists. */
function closed(schema: Schema): Schema {
	const copy: Schema = { ...schema };
	if (copy.properties) {
		copy.properties = Object.fromEntries(
			Object.entries(copy.properties as Record<string, Schema>).map(([k, v]) => [k, closed(v)]),
		);
		copy.additionalProperties = false;
	}
	if (copy.items) copy.items = closed(copy.items as Schema);
	return copy;
}

/** Field paths a schema lists (`steps[].note`), or an item holds. */
function declaredPaths(schema: Schema, at = ''): string[] {
	const props = Object.entries((schema.properties ?? {}) as Record<string, Schema>).flatMap(
		([key, value]) => [`${at}${key}`, ...declaredPaths(value, `${at}${key}.`)],
	);
	const items = schema.items ? declaredPaths(schema.items as Schema, at.replace(/\.$/, '[].')) : [];
	return [...props, ...items];
}
function seenPaths(value: unknown, at = ''): string[] {
	if (Array.isArray(value)) return value.flatMap((v) => seenPaths(v, at.replace(/\.$/, '[].')));
	if (typeof value !== 'object' || value === null) return [];
	return Object.entries(value).flatMap(([key, v]) => [
		`${at}${key}`,
		...seenPaths(v, `${at}${key}.`),
	]);
}

const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true });
const schemaOf = (file: string) =>
	JSON.parse(fs.readFileSync(path.join(SCHEMA_DIR, file), 'utf8')) as Schema;

describe('output schemas against the real output, in the engine', () => {
	let sandbox: Sandbox;
	let creds: { baseUrl: string; apiKey: string };
	/** Output items by schema file, from every run below. */
	const outputs = new Map<string, IDataObject[]>();

	beforeAll(async () => {
		sandbox = await startSandbox({ apiKeys: [KEY], seed: { leads: 0, campaigns: 0, messages: 0 } });
		creds = { baseUrl: sandbox.url, apiKey: KEY };
	});
	afterAll(async () => sandbox.stop());

	/** Runs an operation; its items (there must be some) are kept for its schema file. */
	async function run(parameters: INodeParameters): Promise<IDataObject[]> {
		const { items, error } = await runNode(creds, parameters);
		expect(error).toBeUndefined();
		expect(items.length).toBeGreaterThan(0);
		const file = `v1.0.0/${String(parameters.resource)}/${String(parameters.operation)}.json`;
		const json = items.map((item) => item.json);
		outputs.set(file, [...(outputs.get(file) ?? []), ...json]);
		return json;
	}

	test('every operation and the trigger run, in the ways that shape their output', async () => {
		const lead = (operation: string, more: INodeParameters = {}) =>
			run({ resource: 'lead', operation, ...more });
		const [ada] = await lead('create', {
			firstName: 'Ada',
			lastName: 'Lovelace',
			company: 'Analytical Engines',
			title: 'Countess',
			linkedinUrl: 'https://www.linkedin.com/in/ada',
		});
		await lead('get', { leadId: rl(String(ada.id)) });
		await lead('update', { leadId: rl(String(ada.id)), updateFields: { title: 'Analyst' } });
		const upsert = { linkedinUrl: 'https://www.linkedin.com/in/grace', firstName: 'Grace' };
		const [grace] = await lead('upsert', upsert); // created
		await lead('upsert', upsert); // unchanged
		await lead('upsert', { ...upsert, company: 'US Navy' }); // updated
		await lead('getAll');
		await lead('delete', { leadId: rl(String(grace.id)) });
		const succeed = { options: { succeedIfNotFound: true } };
		await lead('delete', { leadId: rl(String(ada.id)), ...succeed }); // deleted
		await lead('delete', { leadId: rl(String(ada.id)), ...succeed }); // notFound

		const campaign = (operation: string, more: INodeParameters = {}) =>
			run({ resource: 'campaign', operation, ...more });
		const create = {
			name: 'Founders Q3',
			campaignType: 'connection_message',
			stepsMode: 'builder',
			steps: {
				step: [
					{ type: 'connection_request', note: 'Hi {{firstName}}' },
					{ type: 'message', delayDays: 2, body: 'Thanks for connecting.' },
				],
			},
		};
		const [founders] = await campaign('create', create); // created
		await campaign('create', create); // existing
		await campaign('create', { ...create, ifNameTaken: 'create' }); // no outcome
		const id = { campaignId: rl(String(founders.id)) };
		await campaign('get', id);
		await campaign('getAll');
		await campaign('start', { ...id, options: { succeedIfActive: true } }); // started
		await campaign('start', { ...id, options: { succeedIfActive: true } }); // unchanged
		await campaign('pause', { ...id, options: { succeedIfPaused: true } }); // paused
		await campaign('pause', { ...id, options: { succeedIfPaused: true } }); // unchanged
		await campaign('start', id);
		await campaign('pause', id);

		const member = sandbox.store.addLead({ first_name: 'Mia', campaign_id: String(founders.id) });
		sandbox.insertMessages({ count: 2, lead_id: member.id, campaign_id: String(founders.id) });
		sandbox.reply({ lead_id: member.id, body: 'Happy to talk' });
		await campaign('getAnalytics', id);

		const message = (operation: string, more: INodeParameters = {}) =>
			run({ resource: 'message', operation, ...more });
		const send = {
			leadId: rl(member.id),
			body: 'Following up',
			options: { skipIfAlreadySent: true },
		};
		const [sent] = await message('send', send); // sent
		await message('send', send); // skipped
		await message('send', { leadId: rl(member.id), body: 'Plain' });
		await message('get', { messageId: String(sent.id) });
		await message('getAll', { filters: { leadId: rl(member.id) } });

		const polled = await new TriggerHarness(creds).poll('manual');
		expect(polled).toHaveLength(1);
		outputs.set('v1.0.0.json', polled);

		// The runs took the paths that add an outcome (or none).
		const outcomes = (file: string) => outputs.get(`v1.0.0/${file}.json`)!.map((i) => i.outcome);
		expect(outcomes('lead/upsert')).toEqual(['created', 'unchanged', 'updated']);
		expect(outcomes('lead/delete')).toEqual([undefined, 'deleted', 'notFound']);
		expect(outcomes('campaign/create')).toEqual(['created', 'existing', undefined]);
		expect(outcomes('campaign/start')).toEqual(['started', 'unchanged', undefined]);
		expect(outcomes('campaign/pause')).toEqual(['paused', 'unchanged', undefined]);
		expect(outcomes('message/send')).toEqual(['sent', 'skipped', undefined]);

		// Every file had its operation run.
		const files = fs
			.readdirSync(SCHEMA_DIR, { recursive: true, encoding: 'utf8' })
			.filter((file) => file.endsWith('.json'))
			.map((file) => file.split(path.sep).join('/'));
		expect([...outputs.keys()].sort()).toEqual(files.sort());
	});

	test('each item holds only the fields its schema lists, of the types it says', () => {
		expect(outputs.size).toBe(16);
		const failures: string[] = [];
		for (const [file, items] of outputs) {
			const validate = ajv.compile(closed(schemaOf(file)));
			for (const item of items) {
				for (const e of validate(item) ? [] : validate.errors!) {
					const field = (e.params as { additionalProperty?: string }).additionalProperty;
					failures.push(
						`${file}: ${e.instancePath || 'item'} ${e.message}${field ? `: ${field}` : ''}`,
					);
				}
			}
		}
		expect(failures).toEqual([]);
	});

	test('each field a schema lists comes out of the node', () => {
		const unseen: string[] = [];
		for (const [file, items] of outputs) {
			const seen = new Set(items.flatMap((item) => seenPaths(item)));
			for (const field of declaredPaths(schemaOf(file)))
				if (!seen.has(field)) unseen.push(`${file}: ${field}`);
		}
		expect(unseen).toEqual([]);
	});
});
