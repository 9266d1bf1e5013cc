/**
 * Walks the action node's description the way the editor sees it: every operation it offers must
 * resolve to a table row that makes a request (method, path with its id, builders), and no declarative
 * routing, which the node's execute() would ignore, may be declared. Then how the node starts its items,
 * in n8n's engine against the sandbox: how many at a time, in batches, and what a failure stops.
 */
import type { INodeProperties, INodePropertyOptions, INodeTypeDescription } from 'n8n-workflow';

import { OutreachAutomation } from '../../../../nodes/OutreachAutomation/OutreachAutomation.node';
import { findOperation, RESOURCES } from '../../../../nodes/OutreachAutomation/resources';
import {
	checkRoutingContract,
	ITEMS_IN_FLIGHT,
} from '../../../../nodes/OutreachAutomation/routing/route';
import { resetRateLimitState } from '../../../../nodes/OutreachAutomation/transport/pacing';
import { runNode } from '../../../engine/harness';
import { startSandbox, type Sandbox } from '../../../sandbox/server';

const description = new OutreachAutomation().description;
const byName = (name: string) => description.properties.filter((p) => p.name === name);
const resourceValues = (byName('resource')[0].options as INodePropertyOptions[]).map((o) =>
	String(o.value),
);

/** The operations the editor offers, as [resource, operation option]. */
const offered: Array<[string, INodePropertyOptions]> = byName('operation').flatMap((property) =>
	(property.options as INodePropertyOptions[]).map(
		(option) =>
			[String(property.displayOptions!.show!.resource![0]), option] as [
				string,
				INodePropertyOptions,
			],
	),
);

/** Whether the editor shows `property` for this resource and operation (its other conditions aside). */
const shownFor = (property: INodeProperties, resource: string, operation: string) =>
	(property.displayOptions?.show?.resource ?? []).includes(resource) &&
	(property.displayOptions?.show?.operation ?? []).includes(operation);

describe('every operation of the description resolves to a request', () => {
	it('offers exactly the operations of the tables, for the resources of the tables', () => {
		expect(resourceValues).toEqual(RESOURCES.map((table) => table.value));
		expect(offered.map(([resource, option]) => `${resource}.${option.value}`).sort()).toEqual(
			RESOURCES.flatMap((table) =>
				table.operations.map((operation) => `${table.value}.${operation.value}`),
			).sort(),
		);
	});

	it.each(
		offered.map(
			([resource, option]) => [`${resource} > ${option.name}`, resource, option] as const,
		),
	)('%s: method, path, id, builders, and no declarative routing', (_label, resource, option) => {
		const found = findOperation(resource, String(option.value));
		expect(found).toBeDefined();
		const { operation } = found!;
		expect(['GET', 'POST', 'PATCH', 'DELETE']).toContain(operation.method);
		expect(operation.path).toMatch(/^\/[a-z]/);
		expect(typeof operation.safeToRepeat).toBe('boolean');
		if (operation.method === 'POST' || operation.method === 'PATCH')
			expect(typeof operation.body).toBe('function');
		else expect(operation.body).toBeUndefined();
		if (operation.path.includes('{id}')) {
			// The id's parameter is one the editor shows for this operation.
			const parameter = byName(operation.id!.parameter).find((p) =>
				shownFor(p, resource, operation.value),
			);
			expect(parameter).toBeDefined();
		} else {
			expect(operation.id).toBeUndefined();
		}
		if (operation.list) {
			expect(operation.method).toBe('GET');
			for (const name of ['returnAll', 'limit']) {
				expect(byName(name).some((p) => shownFor(p, resource, operation.value))).toBe(true);
			}
		}
		expect(option.routing).toBeUndefined();
	});

	it('every field is shown for operations that exist, and each parameter name once per operation', () => {
		for (const property of description.properties) {
			const show = property.displayOptions?.show;
			if (!show?.operation) continue;
			for (const operation of show.operation) {
				expect(findOperation(String(show.resource![0]), String(operation))).toBeDefined();
			}
		}
		for (const [resource, option] of offered) {
			const names = description.properties
				.filter((p) => shownFor(p, resource, String(option.value)))
				.filter((p) => !p.displayOptions?.show?.returnAll)
				.map((p) => p.name);
			expect(new Set(names).size).toBe(names.length);
		}
	});

	it('the node runs its own execute(): no requestDefaults, no requestOperations', () => {
		expect(typeof new OutreachAutomation().execute).toBe('function');
		expect(description.requestOperations).toBeUndefined();
		expect(description.requestDefaults).toBeUndefined();
	});

	it("keeps n8n's Request Options setting (saved workflows use it)", () => {
		const [options] = byName('requestOptions');
		expect(options.isNodeSetting).toBe(true);
		expect((options.options ?? []).map((o) => o.name).sort()).toEqual(
			['allowUnauthorizedCerts', 'batching', 'proxy', 'timeout'].sort(),
		);
	});
});

describe('the routing contract: what the router would ignore is refused when the node loads', () => {
	const withProperties = (properties: INodeProperties[]): INodeTypeDescription => ({
		...description,
		properties: [...description.properties, ...properties],
	});
	const field = (extra: Partial<INodeProperties>): INodeProperties => ({
		displayName: 'Extra',
		name: 'extra',
		type: 'string',
		default: '',
		...extra,
	});

	it('accepts the description as it is', () => {
		expect(checkRoutingContract(description)).toBe(description);
	});

	it.each([
		[
			'requestDefaults',
			{ ...description, requestDefaults: { baseURL: 'https://x' } },
			/requestDefaults is set/,
		],
		[
			'requestOperations',
			{ ...description, requestOperations: { pagination: () => [] } as never },
			/requestOperations is set/,
		],
		[
			'send.property on a field',
			withProperties([field({ routing: { send: { type: 'body', property: 'x' } } })]),
			/extra has routing/,
		],
		[
			'headers on a field',
			withProperties([field({ routing: { request: { headers: { 'X-A': '1' } } } })]),
			/extra has routing/,
		],
		[
			'postReceive on an operation',
			withProperties([
				{
					displayName: 'Operation',
					name: 'operation',
					type: 'options',
					default: 'x',
					options: [
						{
							name: 'X',
							value: 'x',
							routing: { output: { postReceive: [] } },
						},
					],
				},
			]),
			/operation option "x" has routing/,
		],
		[
			'routing inside a collection',
			withProperties([
				field({
					type: 'collection',
					default: {},
					options: [field({ name: 'inner', routing: { send: { type: 'query', property: 'q' } } })],
				}),
			]),
			/extra\.inner has routing/,
		],
	])('refuses %s', (_name, given, message) => {
		expect(() => checkRoutingContract(given as INodeTypeDescription)).toThrow(message);
	});
});

describe('how the node starts its items', () => {
	const KEY = 'route-items-secret-key-7c2d';
	let sandbox: Sandbox;
	const credentials = () => ({ baseUrl: sandbox.url, apiKey: KEY });

	beforeAll(async () => {
		sandbox = await startSandbox({ apiKeys: [KEY], seed: { leads: 0, campaigns: 0, messages: 0 } });
	});
	afterAll(async () => sandbox.stop());
	beforeEach(() => {
		resetRateLimitState();
		sandbox.reset({ leads: 0, campaigns: 0, messages: 0 });
	});

	it(`a failure without Continue On Fail: requests under way finish, those waiting for the rate limit are withdrawn unsent, no further item starts (${ITEMS_IN_FLIGHT} at a time)`, async () => {
		// 100 per 2-s window: the 150th item is refused (before its request) in the second window,
		// while up to ITEMS_IN_FLIGHT items wait behind it for their turn.
		sandbox.config({ rateLimit: 100, windowMs: 2000, resetFormat: 'epoch-ms' });
		const inputs = Array.from({ length: 3 * ITEMS_IN_FLIGHT }, (_, i) => ({
			url: i === 149 ? 'not a web address' : `https://www.linkedin.com/in/lead-${i}`,
		}));
		const { error } = await runNode(
			credentials(),
			{ resource: 'lead', operation: 'create', firstName: 'Ada', linkedinUrl: '={{ $json.url }}' },
			inputs,
		);
		expect(error?.message).toBe('LinkedIn Profile URL "not a web address" is not a web address');
		const { requests, creates } = sandbox.stats();
		// The first window's 100 and what the second had granted before the failure; none after.
		expect(requests).toBeGreaterThanOrEqual(100);
		expect(requests).toBeLessThanOrEqual(200);
		expect(creates.lead).toBe(requests);
		// What became of the others, in counts a re-run can be planned by.
		expect(error?.description).toContain(
			`Of the other ${inputs.length - 1} items: ${requests} carried out, ${inputs.length - 1 - requests} not sent.`,
		);
	}, 60_000);

	it('Request Options > Batching: each batch starts the interval after the one before', async () => {
		const lead = sandbox.store.addLead({ first_name: 'Ada' });
		const { items, error } = await runNode(
			credentials(),
			{
				resource: 'lead',
				operation: 'get',
				leadId: { __rl: true, mode: 'id', value: String(lead.id) },
				requestOptions: { batching: { batch: { batchSize: 2, batchInterval: 1000 } } },
			},
			Array.from({ length: 5 }, () => ({})),
		);
		expect(error).toBeUndefined();
		expect(items.map((item) => item.pairedItem)).toEqual([0, 1, 2, 3, 4].map((item) => ({ item })));
		const times = sandbox.requests().map((request) => request.time);
		expect(times).toHaveLength(5);
		// Lower bounds only: a slow machine may start a batch later, never earlier. These are arrival
		// times, and a busy machine may deliver a batch's first request late while the next batch
		// starts on time (a CI run measured 285 ms for an interval of 300): hence the margin.
		expect(times[2] - times[0]).toBeGreaterThanOrEqual(750);
		expect(times[4] - times[0]).toBeGreaterThanOrEqual(1750);
	}, 30_000);
});
