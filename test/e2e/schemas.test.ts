/**
 * The output schemas as a real n8n serves them from the installed package: the request the editor's schema
 * preview sends for every operation (`/schemas/<node type>/<version>/<resource>/<operation>.json`, without
 * a session, as the editor sends it) and the trigger's file, each answered with the packed file, a valid
 * JSON Schema of an object.
 */
import fs from 'node:fs';
import path from 'node:path';

import Ajv from 'ajv';

import { N8N_VERSION, NODE_TYPES } from '../n8n/runtime';
import { committedSchemaFiles } from '../tools/schemas';
import { serve, startLightWorld, stopLightWorld, type LightWorld } from './light-world';

const TAG = 'schemas';
let world: LightWorld | undefined;

beforeAll(async () => {
	world = await startLightWorld(TAG, []);
	await serve(world, []);
}, 30 * 60_000);

afterAll(async () => {
	const failed = Boolean((globalThis as { __outreachE2eFailures?: number }).__outreachE2eFailures);
	await stopLightWorld(TAG, world, failed);
}, 60_000);

/** The file's URL as the editor builds it: the node type, then the file's path without the leading v. */
function schemaUrl(file: string): string {
	const nodeType = file.includes('/') ? NODE_TYPES.action : NODE_TYPES.trigger;
	return `/schemas/${nodeType}/${file.replace(/^v/, '')}`;
}

async function get(urlPath: string): Promise<{ status: number; type: string; text: string }> {
	const response = await fetch(`${world!.n8n.url}${urlPath}`);
	return {
		status: response.status,
		type: response.headers.get('content-type') ?? '',
		text: await response.text(),
	};
}

const files = [...committedSchemaFiles().keys()].sort();

test('the package ships 15 operation schemas and the trigger one', () => {
	expect(files.filter((f) => f.includes('/'))).toHaveLength(15);
	expect(files.filter((f) => !f.includes('/'))).toEqual(['v1.0.0.json']);
	// The installed copy is the packed one.
	const installed = path.join(
		world!.userFolder,
		'.n8n/nodes/node_modules/n8n-nodes-outreach-automation/dist/nodes/OutreachAutomation/__schema__',
	);
	for (const file of files) expect(fs.existsSync(path.join(installed, file))).toBe(true);
});

// 1.123.81 has the same route (it pads nothing: the editor sends the padded version) and serves them alike.
test(`n8n ${N8N_VERSION} serves every one, without a session, as the editor asks for it`, async () => {
	const ajv = new Ajv({ strict: true, allowUnionTypes: true });
	const served: string[] = [];
	for (const file of files) {
		const { status, type, text } = await get(schemaUrl(file));
		expect({ file, status, json: type.includes('application/json') }).toEqual({
			file,
			status: 200,
			json: true,
		});
		const schema = JSON.parse(text) as Record<string, unknown>;
		// What the editor's preview accepts: an object schema with fields; and valid for a validator.
		expect(schema).toMatchObject({ type: 'object', properties: expect.any(Object) });
		expect(() => ajv.compile(schema)).not.toThrow();
		expect(schema).toEqual(JSON.parse(committedSchemaFiles().get(file)!));
		served.push(file);
	}
	expect(served).toHaveLength(16);
});

test('n8n looks for the exact version: another version or operation is a 404', async () => {
	const other = await get(`/schemas/${NODE_TYPES.action}/2.0.0/lead/get.json`);
	const unknown = await get(`/schemas/${NODE_TYPES.action}/1.0.0/lead/archive.json`);
	expect([other.status, unknown.status]).toEqual([404, 404]);
});
