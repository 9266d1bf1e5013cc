/**
 * Lead > Create or Update: finds the lead with the item's LinkedIn profile (the person profileIdentity
 * names), then creates it, changes only the fields that differ, or leaves it alone. One index per
 * execution, shared by all its items.
 */
import type { IDataObject } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import type { ItemParameters } from '../shared/parameters';
import { describe, invalid } from '../shared/parameters';
import type { Identity } from './profileIdentity';
import { exactKey, profileIdentity, profileKey, storedKey } from './profileIdentity';
import type { FirstPage, OperationRun, Pipeline, RequestPart, RunRequest } from './table';
import { mayHaveRun } from './table';

export type Outcome = 'created' | 'updated' | 'unchanged';

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

/** Leads by the key of their stored address (storedKey). */
type Index = Map<string, IDataObject[]>;

/**
 * How leads are found: one read of the whole list, or per-profile searches where the server's search is
 * proven to find profiles (items whose profile a search cannot be trusted to find use the list).
 */
type Finder = { kind: 'list'; index: Index } | { kind: 'search'; index: () => Promise<Index> };

function indexed(leads: IDataObject[], field: string): Index {
	const index: Index = new Map();
	for (const lead of leads) {
		const key = storedKey(lead[field]);
		if (key === undefined) continue;
		const same = index.get(key);
		if (same) same.push(lead);
		else index.set(key, [lead]);
	}
	return index;
}

/** The leads an item's address matches in `index`: its person's key, or its exact text. */
function matchesIn(index: Index, key: string, raw: string): IDataObject[] {
	const byKey = index.get(key) ?? [];
	const byText = index.get(exactKey(raw));
	return byText ? [...new Set([...byKey, ...byText])] : byKey;
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
 * create may have been carried out without this run knowing (the lead may exist or not). Undefined:
 * none before it knew the lead; look it up.
 */
type Previous = { lead: IDataObject } | { failed: number } | undefined;

/**
 * The execution's finder, built on first use with at most 2 requests to learn the search (none when it is
 * known not to find profiles), then either per-profile searches or one read of the whole list, whichever
 * is proven and cheaper.
 */
function finderOf(pipeline: Pipeline, items: number, field: string): () => Promise<Finder> {
	let finder: Promise<Finder> | undefined;
	let whole: Promise<Index> | undefined;
	const list: RunRequest = { method: 'GET', path: '/leads', safeToRepeat: true };
	// The list read from page 2 on when page 1 was just read (`first`): page 1 is asked once.
	const readIndex = (first?: FirstPage) =>
		(whole ??= pipeline.readAll(list, first).then((leads) => indexed(leads, field)));

	/**
	 * Searches one lead of the first page by its profile's search term, in other letter case: found, and
	 * fewer leads than the list, proves the search finds profiles whatever their case. Undefined: nothing
	 * to learn from.
	 */
	const learn = async (first: FirstPage) => {
		let target: { key: string; searchTerm: string } | undefined;
		for (const lead of first.items) {
			const identity = profileIdentity(lead[field]);
			if ('key' in identity && identity.searchTerm !== undefined) {
				target = { key: identity.key, searchTerm: identity.searchTerm };
				break;
			}
		}
		if (!target || first.items.length < 2) return undefined;
		const found = await pipeline.firstPage({
			...list,
			qs: { search: target.searchTerm.toUpperCase() },
		});
		const hit = found.items.some((lead) => profileKey(lead[field]) === target.key);
		// A search the server ignores answers the whole list: as many as the list (page 1 asked the same size).
		const fewer = (found.total ?? found.items.length) < (first.total ?? first.items.length);
		return hit && fewer;
	};

	const build = async (): Promise<Finder> => {
		const key = await pipeline.credentialKey();
		// A search known not to find profiles: straight to the list. A search that did is checked again
		// (one request, within the +2): a server whose search stopped covering profiles must not make
		// every lookup come back empty.
		if (learnt(key) === false) return { kind: 'list', index: await readIndex() };
		const first = await pipeline.firstPage(list);
		// The whole list in one page (and the total says so): nothing else to read.
		if (!first.items.length || (first.total !== undefined && first.items.length >= first.total))
			return { kind: 'list', index: indexed(first.items, field) };
		const proven = await learn(first);
		if (proven !== undefined) remember(key, proven);
		if (proven) {
			// Per-profile searches cost one request per item; the list ceil(M / P) + 1. Without a total the
			// list's length is unknown: searches, whose cost is known.
			const pages =
				first.total === undefined
					? Infinity
					: Math.ceil(first.total / Math.max(1, first.items.length)) + 1;
			// The list, if searches need it later, is read whole then: page 1 may have changed by then.
			if (items <= pages) return { kind: 'search', index: () => readIndex() };
		}
		return { kind: 'list', index: await readIndex(first) };
	};

	return () => (finder ??= build());
}

/** The error of an item whose address names no one: refused before any request, never matched. */
function refuseAddress(
	parameters: ItemParameters,
	label: string,
	raw: unknown,
	identity: Extract<Identity, { refused: string }>,
): never {
	if (raw === undefined || (typeof raw === 'string' && !raw.trim())) {
		invalid(
			parameters,
			`${label} is empty`,
			'Create or Update finds the lead by it: fill it with the address of the LinkedIn profile, or use Create for contacts without one.',
		);
	}
	if (typeof raw !== 'string') invalid(parameters, `${label} must be text, not ${describe(raw)}`);
	invalid(
		parameters,
		`${label} "${raw}" ${identity.refused} (item ${parameters.getItemIndex() + 1})`,
		"Create or Update finds the lead by the person's profile address, e.g. https://www.linkedin.com/in/ada-lovelace: an address that names no one could match anyone, so the item was not sent. Fix the address in the source data, or use Create for contacts without one.",
	);
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

		const lookUp = async (
			identity: { key: string; searchTerm?: string },
			raw: string,
			itemIndex: number,
		): Promise<IDataObject[]> => {
			const found = await finder();
			if (found.kind === 'list') return matchesIn(found.index, identity.key, raw);
			// A search term every stored spelling contains; otherwise the list.
			if (identity.searchTerm === undefined)
				return matchesIn(await found.index(), identity.key, raw);
			const hits = await pipeline.readAll({
				method: 'GET',
				path: '/leads',
				qs: { search: identity.searchTerm },
				safeToRepeat: true,
				itemIndex,
			});
			// A search matches more than the profile (a longer handle, a name): compare each.
			return matchesIn(indexed(hits, field), identity.key, raw);
		};

		const write = async (
			parameters: ItemParameters,
			identity: { key: string; searchTerm?: string },
			body: IDataObject,
			previous: Previous,
			wrote: () => void,
		): Promise<{ lead: IDataObject; outcome: Outcome }> => {
			const itemIndex = parameters.getItemIndex();
			if (previous && 'failed' in previous) {
				throw new NodeOperationError(
					node,
					`Not sent: item ${previous.failed + 1} with the same ${label} may have created the lead`,
					{
						description:
							'Its answer was lost, so whether that lead was created is unknown, and this item was not sent (it could create it twice). Run the workflow again: Create or Update finds the lead if it exists.',
						itemIndex,
					},
				);
			}
			const matches = previous
				? [previous.lead]
				: await lookUp(identity, String(body[field]), itemIndex);
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
			// Whatever the answer holds, over the lead as known: an answer without the id keeps the lead's.
			const answer = typeof data === 'object' && data !== null && !Array.isArray(data) ? data : {};
			return { lead: { ...lead, ...changes, ...(answer as IDataObject) }, outcome: 'updated' };
		};

		return async (parameters) => {
			// Bad input fails this item before any request of its own.
			const body = bodyOf(parameters);
			const identity = profileIdentity(body[field]);
			if ('refused' in identity) refuseAddress(parameters, label, body[field], identity);
			// Queued synchronously, in input order, behind the previous item with this profile.
			const before = queues.get(identity.key);
			const itemIndex = parameters.getItemIndex();
			let writing = false;
			const wrote = () => (writing = true);
			const done = (async () => write(parameters, identity, body, await before, wrote))();
			// A create whose answer was lost may have been carried out: the next item must not create it
			// again. Any other failure (refused, not sent, an update) leaves what this one saw.
			const next: Promise<Previous> = done.then(
				({ lead }) => ({ lead }),
				async (error) => (writing && mayHaveRun(error) ? { failed: itemIndex } : await before),
			);
			queues.set(identity.key, next);
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
