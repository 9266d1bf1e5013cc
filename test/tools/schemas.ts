/**
 * The output schemas n8n's editor previews (nodes/OutreachAutomation/__schema__/), generated from the zod
 * schemas of test/sandbox/outputs.ts. `npm run schemas` writes them; `expectedSchemas()` is what the
 * unit test compares the committed files with (parsed).
 *
 * Layout, as n8n resolves it (n8n-core's output-schema-resolver): the action node's at
 * `v<version as x.y.z>/<resource>/<operation>.json`, what the editor's preview asks for at
 * `/schemas/<type>/<version>/<resource>/<operation>.json`. The trigger has no resource or operation, so
 * its file is `v<version>.json`: where n8n 1.x's editor asks (`/schemas/<type>/<version>.json`) and the
 * first place n8n 2.x's schema lookup (AI builder, mock data) probes; 2.x's editor previews no trigger.
 * (n8n's own Webhook keeps its at `v<version>/output.json`, which 1.x's editor would not find.) Both
 * nodes live in one folder: one `__schema__`.
 */
import fs from 'node:fs';
import path from 'node:path';

import { z } from 'zod/v4';

import { OutreachAutomation } from '../../nodes/OutreachAutomation/OutreachAutomation.node';
import { OutreachAutomationTrigger } from '../../nodes/OutreachAutomation/OutreachAutomationTrigger.node';
import { OPERATION_ITEMS, TRIGGER_ITEM } from '../sandbox/outputs';

export const ROOT = path.resolve(__dirname, '..', '..');
export const SCHEMA_DIR = path.join(ROOT, 'nodes', 'OutreachAutomation', '__schema__');

type Json = Record<string, unknown>;

/** n8n's editor pads a node version the same way: 1 -> 1.0.0, 1.1 -> 1.1.0. */
export function versionDir(version: number): string {
	return `v${String(version).split('.').concat(['0', '0']).slice(0, 3).join('.')}`;
}

const versionsOf = (version: number | number[]) => (Array.isArray(version) ? version : [version]);

/**
 * The node's schemas, the way n8n ships its own: types and descriptions, no `required` (a service may
 * leave a field out) and no `additionalProperties` (it may send more). A nullable field is `type: [t,
 * "null"]`: the editor's preview reads the first type and shows nothing for an `anyOf`.
 */
export function publishedSchema(schema: unknown): unknown {
	if (Array.isArray(schema)) return schema.map(publishedSchema);
	if (typeof schema !== 'object' || schema === null) return schema;
	const {
		$schema: _dialect,
		required: _required,
		additionalProperties: _more,
		...rest
	} = schema as Json;
	const anyOf = rest.anyOf as Json[] | undefined;
	if (anyOf?.length === 2 && anyOf[1].type === 'null' && typeof anyOf[0].type === 'string') {
		const { anyOf: _union, ...outer } = rest;
		return publishedSchema({ ...anyOf[0], ...outer, type: [anyOf[0].type, 'null'] });
	}
	// The type first, then what narrows it, as n8n's own files read.
	const order = (key: string) => KEY_ORDER.indexOf(key) + 1 || KEY_ORDER.length + 1;
	const keys = Object.keys(rest).sort((a, b) => order(a) - order(b));
	return Object.fromEntries(keys.map((key) => [key, publishedSchema(rest[key])]));
}

const KEY_ORDER = ['type', 'enum', 'description', 'properties', 'items'];

const toJson = (schema: z.ZodType) =>
	publishedSchema(z.toJSONSchema(schema, { target: 'draft-7', io: 'output' }));

/** Every schema file as it should be, keyed by its path under __schema__/ (always with '/'). */
export function expectedSchemas(): Map<string, unknown> {
	const files = new Map<string, unknown>();
	for (const version of versionsOf(new OutreachAutomation().description.version)) {
		for (const [resource, operations] of Object.entries(OPERATION_ITEMS)) {
			for (const [operation, schema] of Object.entries(operations))
				files.set(`${versionDir(version)}/${resource}/${operation}.json`, toJson(schema));
		}
	}
	for (const version of versionsOf(new OutreachAutomationTrigger().description.version))
		files.set(`${versionDir(version)}.json`, toJson(TRIGGER_ITEM));
	return files;
}

/** The files under __schema__/ now (their text), keyed like expectedSchemas(). */
export function committedSchemaFiles(): Map<string, string> {
	const files = new Map<string, string>();
	const walk = (dir: string) => {
		if (!fs.existsSync(dir)) return;
		for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
			const full = path.join(dir, entry.name);
			if (entry.isDirectory()) walk(full);
			else
				files.set(
					path.relative(SCHEMA_DIR, full).split(path.sep).join('/'),
					fs.readFileSync(full, 'utf8'),
				);
		}
	};
	walk(SCHEMA_DIR);
	return files;
}

/** `npm run schemas`: rewrites __schema__/ from the zod schemas (stale files removed), as prettier formats. */
async function main(): Promise<void> {
	// prettier's API cannot load under jest: the test compares the parsed JSON, `npm run lint` the format.
	const { format, resolveConfig } = await import('prettier');
	const options = { ...(await resolveConfig(path.join(SCHEMA_DIR, 'x.json'))), parser: 'json' };
	const files = expectedSchemas();
	fs.rmSync(SCHEMA_DIR, { recursive: true, force: true });
	for (const [file, schema] of files) {
		const target = path.join(SCHEMA_DIR, file);
		fs.mkdirSync(path.dirname(target), { recursive: true });
		fs.writeFileSync(target, await format(JSON.stringify(schema, null, '\t'), options));
	}
	process.stdout.write(
		`schemas: ${files.size} files written to ${path.relative(ROOT, SCHEMA_DIR)}/\n`,
	);
}

if (require.main === module) {
	main().catch((error: Error) => {
		process.stderr.write(`schemas: ${error.stack ?? error.message}\n`);
		process.exitCode = 1;
	});
}
