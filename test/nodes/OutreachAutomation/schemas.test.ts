/**
 * The output schemas under nodes/OutreachAutomation/__schema__/: generated from the zod schemas (no hand
 * edits, no drift), one per operation the node really offers, where n8n looks for them for the node's
 * current version. Whether they match what the node outputs: schemaOutputs.test.ts.
 */
import fs from 'node:fs';
import path from 'node:path';

import { resolveOutputSchemaPath } from 'n8n-core';
import type { INodeProperties, INodeTypeDescription } from 'n8n-workflow';

import { OutreachAutomation } from '../../../nodes/OutreachAutomation/OutreachAutomation.node';
import { OutreachAutomationTrigger } from '../../../nodes/OutreachAutomation/OutreachAutomationTrigger.node';
import { committedSchemaFiles, expectedSchemas, SCHEMA_DIR, versionDir } from '../../tools/schemas';

const NODE_DIR = path.dirname(SCHEMA_DIR);
const action = new OutreachAutomation().description;
const trigger = new OutreachAutomationTrigger().description;

/** Every resource and operation value the node offers, read from its description as the editor does. */
function operationsOf(description: INodeTypeDescription): Array<[string, string]> {
	const resources = description.properties.find((p) => p.name === 'resource')!;
	return resources.options!.flatMap((option) => {
		const resource = String((option as { value: string }).value);
		const operation = description.properties.find(
			(p: INodeProperties) =>
				p.name === 'operation' && p.displayOptions?.show?.resource?.includes(resource),
		)!;
		return operation.options!.map(
			(o) => [resource, String((o as { value: string }).value)] as [string, string],
		);
	});
}

const versionsOf = (description: INodeTypeDescription) =>
	Array.isArray(description.version) ? description.version : [description.version];

describe('output schemas (__schema__/)', () => {
	test('are the files `npm run schemas` writes from the zod schemas, and nothing else', () => {
		const expected = expectedSchemas();
		const committed = committedSchemaFiles();
		expect([...committed.keys()].sort()).toEqual([...expected.keys()].sort());
		for (const [file, schema] of expected) {
			// A difference here: run `npm run schemas` (never edit the files by hand).
			expect({ file, schema: JSON.parse(committed.get(file)!) }).toEqual({ file, schema });
		}
	});

	test('one per operation of the node, 15 in all, under the names the editor asks for', () => {
		const operations = operationsOf(action);
		expect(operations).toHaveLength(15);
		expect(operations).toEqual(
			expect.arrayContaining([
				['lead', 'upsert'],
				['lead', 'delete'],
				['campaign', 'getAnalytics'],
				['message', 'send'],
			]),
		);
		const files = [...committedSchemaFiles().keys()].filter((f) => f.includes('/'));
		expect(
			files
				.map((f) =>
					f
						.split('/')
						.slice(1, 3)
						.join('/')
						.replace(/\.json$/, ''),
				)
				.sort(),
		).toEqual(operations.map((o) => o.join('/')).sort());
	});

	// n8n looks for the node's exact version (padded to x.y.z) only: a version bump without a folder for it
	// would leave the editor without a preview.
	test("n8n's own resolver finds every operation's schema for the action node's current version", () => {
		for (const version of versionsOf(action)) {
			for (const [resource, operation] of operationsOf(action)) {
				const file = resolveOutputSchemaPath({ nodeDir: NODE_DIR, version, resource, operation });
				expect({ resource, operation, version, found: fs.existsSync(file!) }).toEqual({
					resource,
					operation,
					version,
					found: true,
				});
			}
		}
	});

	test("n8n finds the trigger's for its current version, exactly (1.x's editor) and by lookup (2.x)", () => {
		for (const version of versionsOf(trigger)) {
			const exact = resolveOutputSchemaPath({ nodeDir: NODE_DIR, version });
			const lookup = resolveOutputSchemaPath({ nodeDir: NODE_DIR, version, versionFallback: true });
			expect(exact).toBe(path.join(SCHEMA_DIR, `${versionDir(version)}.json`));
			expect(fs.existsSync(exact!)).toBe(true);
			expect(lookup).toBe(exact);
		}
	});

	test('each is a JSON Schema of an object whose every field has a type', () => {
		const untyped: string[] = [];
		const walk = (schema: Record<string, unknown>, at: string) => {
			if (schema.type === undefined) untyped.push(at);
			for (const [key, value] of Object.entries(
				(schema.properties ?? {}) as Record<string, Record<string, unknown>>,
			))
				walk(value, `${at}.${key}`);
			if (schema.items) walk(schema.items as Record<string, unknown>, `${at}[]`);
		};
		for (const [file, text] of committedSchemaFiles()) {
			const schema = JSON.parse(text) as Record<string, unknown>;
			expect({ file, type: schema.type }).toEqual({ file, type: 'object' });
			expect(Object.keys(schema.properties as object).length).toBeGreaterThan(1);
			walk(schema, file);
		}
		expect(untyped).toEqual([]);
	});
});
