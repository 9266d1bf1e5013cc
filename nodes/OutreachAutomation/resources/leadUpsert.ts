/**
 * Lead > Create or Update: finds the lead with the item's LinkedIn profile, then creates it, changes only
 * the fields that differ, or leaves it alone. One index per execution, shared by all its items.
 */
import type { IDataObject } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import type { ItemParameters } from '../shared/parameters';
import { describe, invalid } from '../shared/parameters';
import type { OperationRun, Pipeline, RequestPart, RunRequest } from './table';

export type Outcome = 'created' | 'updated' | 'unchanged';

/**
 * The profile an address names, as one comparable text: host without "www." and path without trailing
 * slashes, both lower case (LinkedIn profile paths are case-insensitive); scheme, query and fragment
 * dropped. Undefined when the text is not an http(s) address with a path.
 */
export function profileKey(raw: unknown): string | undefined {
	if (typeof raw !== 'string') return undefined;
	const text = raw.trim();
	if (!/^https?:\/\/\S+$/i.test(text)) return undefined;
	let url: URL;
	try {
		url = new URL(text);
	} catch {
		return undefined;
	}
	const host = url.hostname.toLowerCase().replace(/^www\./, '');
	let path = url.pathname;
	try {
		path = decodeURIComponent(path);
	} catch {
		// A stray "%": compare it as written.
	}
	path = path.replace(/\/+$/, '').toLowerCase();
	if (!host || !path) return undefined;
	return `${host}${url.port ? `:${url.port}` : ''}${path}`;
}

// ---- what a server's search covers, learnt once per credential

/**
 * Whether searching a profile's address (host and path) found that lead, per credential. Only a "no" is
 * relied on (for an hour): it saves the two requests that learn it.
 */
const searchFindsProfiles = new Map<string, { proven: boolean; at: number }>();
const LEARNT_KEPT = 1000;
/** Learnt again after this long: a server's search can change with its version. */
const LEARNT_FOR_MS = 60 * 60_000;

function learnt(key: string | undefined, now = Date.now()): boolean | undefined {
	const entry = key ? searchFindsProfiles.get(key) : undefined;
	if (!entry || now - entry.at > LEARNT_FOR_MS) return undefined;
	return entry.proven;
}

function remember(key: string | undefined, proven: boolean, now = Date.now()) {
	if (!key) return;
	searchFindsProfiles.delete(key);
	searchFindsProfiles.set(key, { proven, at: now });
	if (searchFindsProfiles.size > LEARNT_KEPT)
		searchFindsProfiles.delete(searchFindsProfiles.keys().next().value!);
}

/** For tests: forget what was learnt about every server's search. */
export function resetLearntSearch(): void {
	searchFindsProfiles.clear();
}

// ---- the index of one execution

interface FirstPage {
	items: IDataObject[];
	total?: number;
}

/** Leads by profile key: from a whole-list read, or looked up one profile at a time by search. */
type Finder = { kind: 'list'; byProfile: Map<string, IDataObject[]> } | { kind: 'search' };

function asItems(data: unknown): IDataObject[] {
	if (Array.isArray(data)) return data as IDataObject[];
	return data === undefined || data === null ? [] : [data as IDataObject];
}

function indexed(leads: IDataObject[], field: string): Finder {
	const byProfile = new Map<string, IDataObject[]>();
	for (const lead of leads) {
		const key = profileKey(lead[field]);
		if (key === undefined) continue;
		const same = byProfile.get(key);
		if (same) same.push(lead);
		else byProfile.set(key, [lead]);
	}
	return { kind: 'list', byProfile };
}

interface UpsertSettings {
	/** Builds the create body from the item (the same fields as Create), refusing bad input. */
	body: RequestPart;
	/** The wire name of the profile address. */
	profileField: string;
	/** What error messages call the field. */
	label: string;
}

/**
 * A previous item with the same profile, as the next one sees it: the lead it left, or the item whose
 * create failed (the lead may exist or not). Undefined: none before it knew the lead; look it up.
 */
type Previous = { lead: IDataObject } | { failed: number } | undefined;

/**
 * The execution's finder, built on first use with at most 2 requests to learn the search (none when it is
 * known not to find profiles), then either per-profile searches or one read of the whole list, whichever
 * is proven and cheaper.
 */
function finderOf(pipeline: Pipeline, items: number, field: string): () => Promise<Finder> {
	let finder: Promise<Finder> | undefined;
	const list: RunRequest = { method: 'GET', path: '/leads', safeToRepeat: true };

	const firstPage = async (): Promise<FirstPage> => {
		const { data, total } = await pipeline.send({
			...list,
			qs: { page: 1, per_page: pipeline.largePage },
		});
		return { items: asItems(data), total };
	};

	/**
	 * Searches one lead of the first page by its profile, in other letter case: found, and fewer leads than
	 * the list, proves the search finds profiles whatever their case. Undefined: nothing to learn from.
	 */
	const learn = async (first: FirstPage): Promise<boolean | undefined> => {
		const target = first.items.find((lead) => profileKey(lead[field]) !== undefined);
		if (!target || first.items.length < 2) return undefined;
		const key = profileKey(target[field])!;
		const { data, total } = await pipeline.send({
			...list,
			qs: { search: key.toUpperCase(), page: 1, per_page: pipeline.largePage },
		});
		const found = asItems(data);
		const hit = found.some((lead) => profileKey(lead[field]) === key);
		// A search the server ignores answers the whole list: as many as the list (page 1 asked the same size).
		const fewer = (total ?? found.length) < (first.total ?? first.items.length);
		return hit && fewer;
	};

	const build = async (): Promise<Finder> => {
		const key = await pipeline.credentialKey();
		// A search known not to find profiles: straight to the list. A search that did is checked again
		// (one request, within the +2): a server whose search stopped covering profiles must not make
		// every lookup come back empty.
		if (learnt(key) === false) return indexed(await pipeline.readAll(list), field);
		const first = await firstPage();
		// The whole list in one page (and the total says so): nothing else to read.
		if (!first.items.length || (first.total !== undefined && first.items.length >= first.total))
			return indexed(first.items, field);
		const proven = await learn(first);
		if (proven !== undefined) remember(key, proven);
		if (proven) {
			// Per-profile searches cost one request per item; the list ceil(M / P) + 1. Without a total the
			// list's length is unknown: searches, whose cost is known.
			const pages =
				first.total === undefined
					? Infinity
					: Math.ceil(first.total / Math.max(1, first.items.length)) + 1;
			if (items <= pages) return { kind: 'search' };
		}
		return indexed(await pipeline.readAll(list), field);
	};

	return () => (finder ??= build());
}

/**
 * Create or Update, one execution: every item's profile is looked up in one shared finder; items with
 * the same profile run one after another in input order, the later one comparing with the lead as the
 * earlier one left it (so the last item's values win, as if they had run one by one).
 */
export function upsertRun(settings: UpsertSettings): OperationRun {
	const { body: bodyOf, profileField: field, label } = settings;
	return ({ node, pipeline, items }) => {
		const finder = finderOf(pipeline, items, field);
		// Per profile, the last item started: a later item with that profile waits for it and takes its lead
		// (no second lookup, which a list lagging behind its writes could answer without it). One entry per
		// profile of this execution, dropped with it.
		const queues = new Map<string, Promise<Previous>>();

		const lookUp = async (key: string, itemIndex: number): Promise<IDataObject[]> => {
			const found = await finder();
			if (found.kind === 'list') return found.byProfile.get(key) ?? [];
			const matches = await pipeline.readAll({
				method: 'GET',
				path: '/leads',
				qs: { search: key },
				safeToRepeat: true,
				itemIndex,
			});
			// A search may match more than the profile (a longer address, a name): compare each.
			return matches.filter((lead) => profileKey(lead[field]) === key);
		};

		const write = async (
			parameters: ItemParameters,
			key: string,
			body: IDataObject,
			previous: Previous,
			wrote: () => void,
		): Promise<{ lead: IDataObject; outcome: Outcome }> => {
			const itemIndex = parameters.getItemIndex();
			if (previous && 'failed' in previous) {
				throw new NodeOperationError(
					node,
					`Not sent: item ${previous.failed + 1} with the same ${label} failed`,
					{
						description:
							'Whether that lead was created is unknown, so this item was not sent (it could create it twice). Run the workflow again: Create or Update finds the lead if it exists.',
						itemIndex,
					},
				);
			}
			const matches = previous ? [previous.lead] : await lookUp(key, itemIndex);
			if (matches.length > 1) {
				const ids = matches.map((lead) => String(lead.id)).join(', ');
				throw new NodeOperationError(
					node,
					`${matches.length} leads already have this ${label}: ${ids}`,
					{
						description:
							'Create or Update cannot choose between them. Merge or delete the duplicates in Outreach Automation, then run again.',
						itemIndex,
					},
				);
			}
			const request = { itemIndex };
			if (!matches.length) {
				const { data } = await pipeline.send({
					...request,
					method: 'POST',
					path: '/leads',
					body,
					safeToRepeat: false,
					onSend: wrote,
				});
				const lead = data as IDataObject | null | undefined;
				if (
					typeof lead !== 'object' ||
					lead === null ||
					lead.id === undefined ||
					lead.id === null
				) {
					// Without its ID a later item with this profile could not update it.
					throw new NodeOperationError(
						node,
						'The Outreach Automation API confirmed the request but sent no lead data',
						{
							description:
								'The lead was probably created. Run the workflow again: Create or Update finds it by its LinkedIn Profile URL.',
							itemIndex,
						},
					);
				}
				return { lead, outcome: 'created' };
			}
			const [lead] = matches;
			const changes = differences(lead, body, field);
			if (!Object.keys(changes).length) return { lead, outcome: 'unchanged' };
			const id = String(lead.id);
			const { data } = await pipeline.send({
				...request,
				method: 'PATCH',
				path: `/leads/${encodeURIComponent(id)}`,
				id,
				body: changes,
				safeToRepeat: true,
			});
			const updated =
				typeof data === 'object' && data !== null && Object.keys(data).length
					? (data as IDataObject)
					: { ...lead, ...changes };
			return { lead: updated, outcome: 'updated' };
		};

		return async (parameters) => {
			// Bad input fails this item before any request of its own.
			const body = bodyOf(parameters);
			const key = profileKey(body[field]);
			if (key === undefined) {
				const raw = body[field];
				if (raw === undefined) {
					invalid(
						parameters,
						`${label} is empty`,
						'Create or Update finds the lead by it: fill it with the address of the LinkedIn profile.',
					);
				}
				if (typeof raw !== 'string')
					invalid(parameters, `${label} must be text, not ${describe(raw)}`);
				invalid(
					parameters,
					`${label} "${raw}" is not a profile address`,
					'Use the full address of the profile, e.g. https://www.linkedin.com/in/ada-lovelace',
				);
			}
			// Queued synchronously, in input order, behind the previous item with this profile.
			const before = queues.get(key);
			const itemIndex = parameters.getItemIndex();
			let writing = false;
			const wrote = () => (writing = true);
			const done = (async () => write(parameters, key, body, await before, wrote))();
			// Failed without creating (a lookup or an update failed): the next item sees what this one saw.
			const next: Promise<Previous> = done.then(
				({ lead }) => ({ lead }),
				async () => (writing ? { failed: itemIndex } : await before),
			);
			queues.set(key, next);
			const { lead, outcome } = await done;
			return [{ ...lead, outcome }];
		};
	};
}

/**
 * The fields of `body` whose value differs from the lead's: text compared as text, the profile address
 * as the profile it names (a variant of the same address is not a change).
 */
function differences(lead: IDataObject, body: IDataObject, field: string): IDataObject {
	const changes: IDataObject = {};
	for (const [name, value] of Object.entries(body)) {
		const current = lead[name];
		if (name === field && profileKey(current) === profileKey(value)) continue;
		const same =
			current !== undefined &&
			current !== null &&
			typeof current !== 'object' &&
			String(current) === String(value);
		if (!same) changes[name] = value;
	}
	return changes;
}
