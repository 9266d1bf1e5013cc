/**
 * What the node described when each picture of docs/ was taken, kept beside the pictures in
 * docs/pictures.json. `npm run screenshots` writes an entry for every picture of the editor it takes, and
 * `OUTREACH_UI_SCREENSHOTS=docs npm run test:install` for the two of n8n's installer (what the package
 * described: its name, version and nodes); pictures.test.ts (part of `npm run test:ui`) compares each entry
 * with the node's and the package's description of today and fails, naming the picture, when they differ:
 * a picture of a node or package that has changed since is stale.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import type { INodeProperties, INodeTypeDescription } from 'n8n-workflow';

import { OutreachAutomation } from '../../nodes/OutreachAutomation/OutreachAutomation.node';
import { OutreachAutomationTrigger } from '../../nodes/OutreachAutomation/OutreachAutomationTrigger.node';
import { INSTALL_SHOTS } from '../install/shots';
import { committedSchemaFiles } from '../tools/schemas';
import { PROJECT_ROOT } from '../n8n/runtime';
import { DOCS_DIR, SHOTS, type Shot } from './shots';

/** Every picture with a record: the editor's (`npm run screenshots`) and the installer's (`test:install`). */
export const PICTURES = { ...SHOTS, ...INSTALL_SHOTS };

export const RECORD_FILE = path.join(DOCS_DIR, 'pictures.json');

export type Described = Record<string, unknown>;

export interface RecordEntry {
	caption: string;
	/** The day the picture was taken (UTC). */
	taken: string;
	/** The n8n version it was taken in. */
	n8n: string;
	/** What the node described then: what the picture shows of it. */
	described: Described;
}

export type PictureRecord = Record<string, RecordEntry>;

const action = new OutreachAutomation().description;
const trigger = new OutreachAutomationTrigger().description;

/** Whether a property shows for this resource and operation (only `show` on those two is considered). */
function shows(property: INodeProperties, resource: string, operation?: string): boolean {
	const show = property.displayOptions?.show ?? {};
	const matches = (key: string, value?: string) =>
		!show[key] || (value !== undefined && (show[key] as unknown[]).includes(value));
	return matches('resource', resource) && matches('operation', operation);
}

/** The operations of each resource, as the nodes panel lists them: by resource, each with its action. */
function actionsByResource(description: INodeTypeDescription): Record<string, string[]> {
	const resources = description.properties.find((p) => p.name === 'resource')?.options ?? [];
	const actions: Record<string, string[]> = {};
	for (const resource of resources as Array<{ name: string; value: string }>) {
		const operations = description.properties.find(
			(p) => p.name === 'operation' && shows(p, resource.value),
		);
		actions[resource.name] = ((operations?.options ?? []) as Array<{ action?: string }>)
			.map((option) => option.action ?? '')
			.sort();
	}
	return actions;
}

/** A field by its display name; a collection with the names of what it holds, e.g. "Filters (Lead, Status)". */
function named(property: INodeProperties): string {
	const inner = (property.options ?? []) as Array<{ displayName?: string; name: string }>;
	if (!['collection', 'fixedCollection'].includes(property.type) || !inner.length)
		return property.displayName;
	return `${property.displayName} (${inner.map((option) => option.displayName ?? option.name).join(', ')})`;
}

/** The fields an operation shows, in the order of the description. */
function fieldsOf(resource: string, operation: string): string[] {
	return action.properties
		.filter((p) => !['resource', 'operation'].includes(p.name) && shows(p, resource, operation))
		.map(named);
}

function field(resource: string, operation: string, name: string): INodeProperties | undefined {
	return action.properties.find((p) => p.name === name && shows(p, resource, operation));
}

/** The package as n8n's installer shows it: package.json's name, version and nodes. */
function packageManifest(): { name: string; version: string; n8n: { nodes: string[] } } {
	return JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8'));
}

/**
 * The display names of the nodes package.json declares (n8n.nodes, in its order), read from their sources
 * (dist/nodes/X/Y.node.js -> nodes/X/Y.node.ts, class Y): the names the installed package's card lists.
 */
function packageNodes(): string[] {
	return packageManifest().n8n.nodes.map((file) => {
		const source = path.join(PROJECT_ROOT, file.replace(/^dist\//, '').replace(/\.js$/, ''));
		const exported = require(source) as Record<
			string,
			new () => { description: INodeTypeDescription }
		>;
		const NodeType = exported[path.basename(source, '.node')];
		if (!NodeType) throw new Error(`${file} (package.json n8n.nodes): no node class in ${source}`);
		return new NodeType().description.displayName;
	});
}

/** What each picture shows of the nodes' (and, for the installer's, the package's) descriptions. */
export const DESCRIBED: Record<keyof typeof PICTURES, () => Described> = {
	nodePanel: () => ({
		node: action.displayName,
		nodeDescription: action.description,
		trigger: trigger.displayName,
		triggerDescription: trigger.description,
		actions: actionsByResource(action),
	}),
	leadPicker: () => {
		const lead = field('lead', 'get', 'leadId');
		return {
			operation: 'Lead > Get',
			field: lead?.displayName,
			required: lead?.required ?? false,
			modes: (lead?.modes ?? []).map((mode) => mode.displayName),
			searchable: (lead?.modes ?? []).some((mode) => mode.typeOptions?.searchable === true),
		};
	},
	output: () => ({
		operation: 'Lead > Get Many',
		fields: fieldsOf('lead', 'getAll'),
	}),
	triggerEvent: () => ({
		trigger: trigger.displayName,
		fields: trigger.properties.map(named),
	}),
	agentTool: () => ({
		tool: `${action.displayName} Tool`,
		usableAsTool: action.usableAsTool === true,
		leadActions: actionsByResource(action).Lead,
		fields: fieldsOf('lead', 'getAll'),
	}),
	communityInstall: () => {
		const { name, version } = packageManifest();
		return { package: name, typed: `${name}@${version}` };
	},
	schemaPreview: () => ({
		operation: 'Lead > Get',
		fields: Object.keys(
			JSON.parse(committedSchemaFiles().get('v1.0.0/lead/get.json') ?? '{}').properties ?? {},
		),
	}),
	communityInstalled: () => {
		const { name, version } = packageManifest();
		return { package: name, version, nodes: packageNodes() };
	},
};

export function shotKeyOf(shot: Shot): keyof typeof PICTURES {
	const key = (Object.keys(PICTURES) as Array<keyof typeof PICTURES>).find(
		(k) => PICTURES[k] === shot,
	);
	if (!key)
		throw new Error(`${shot.file} is not one of the pictures (ui/shots.ts, install/shots.ts)`);
	return key;
}

export function readRecord(): PictureRecord {
	if (!fs.existsSync(RECORD_FILE)) return {};
	const { $comment: _comment, ...entries } = JSON.parse(fs.readFileSync(RECORD_FILE, 'utf8')) as {
		$comment?: string;
	} & PictureRecord;
	return entries as PictureRecord;
}

/** Records what the node describes now for a picture just taken (the other entries stay). */
export function recordPicture(shot: Shot, n8nVersion: string): void {
	const record = readRecord();
	record[shot.file] = {
		caption: shot.caption,
		taken: new Date().toISOString().slice(0, 10),
		n8n: n8nVersion,
		described: DESCRIBED[shotKeyOf(shot)](),
	};
	const sorted = Object.fromEntries(Object.entries(record).sort(([a], [b]) => a.localeCompare(b)));
	const text = JSON.stringify({
		$comment:
			'Written by `npm run screenshots` (and by `OUTREACH_UI_SCREENSHOTS=docs npm run test:install` for the two community-nodes pictures): what the node or package described when each picture was taken. `npm run test:ui` compares it with the node and package of today (test/ui/pictures.test.ts).',
		...sorted,
	});
	fs.writeFileSync(RECORD_FILE, text);
	// Formatted as `npm run lint` checks it (prettier's API cannot be imported inside jest's VM).
	execFileSync(
		process.execPath,
		[require.resolve('prettier/bin/prettier.cjs'), '--write', RECORD_FILE],
		{
			stdio: 'ignore',
		},
	);
}
