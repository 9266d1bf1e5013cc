/**
 * The drain across polls: a backlog longer than one poll's budget, its place saved as a cursor and
 * taken up by the next poll until it meets the ids known before it began.
 */
import type { IDataObject } from 'n8n-workflow';

import type { Pages } from './pages';
import {
	MAX_DONE_IDS,
	MAX_STOP_IDS,
	idOf,
	reversed,
	type DrainState,
	type ListOrder,
} from './state';
import { walk } from './walk';

/** The drain cursor after reading up to (and including) `page` of `order`. */
export function cursor(
	pages: Pages,
	order: ListOrder,
	page: number,
	items: IDataObject[],
	stop: string[],
	all: boolean,
	done: string[] = [],
	known?: number,
): DrainState {
	// The item read last is the oldest of the page: its last one newest first, its first oldest first.
	const offset = (page - 1) * pages.perPage + (order === 'newest' ? items.length - 1 : 0);
	return {
		anchor: items.map(idOf),
		offset,
		total: pages.total,
		stop: stop.slice(0, MAX_STOP_IDS),
		done: done.slice(0, MAX_DONE_IDS),
		order,
		...(all ? { all } : {}),
		...(known !== undefined ? { known } : {}),
	};
}

/**
 * Goes on with an unfinished drain, from a page at or before its anchor in reading order, towards
 * the oldest end until the first id known before the drain began. What it passes on the way that is
 * known already (read by this drain, or newer) is skipped, never a reason to stop: only the ids known
 * before the drain mark its end.
 *
 * Oldest first (read backwards), new messages join after the anchor and removals only move it towards
 * page 1: its old page is never past it. Newest first, new messages push it down and removals pull
 * it up: it moved by at least the change of the total (it only gained what arrived, and lost at most
 * what left), so its old place plus that change is never past it. Without a total, a page counts as
 * not past it when it starts with a message known to be newer than the gap (one this drain or a later
 * read took, or the anchor), else the page before it is tried.
 */
export async function continueDrain(
	pages: Pages,
	drain: DrainState,
	seen: Set<string>,
	taken: Set<string>,
	into: IDataObject[],
): Promise<DrainState | undefined> {
	const anchor = new Set(drain.anchor);
	const stop = new Set(drain.stop);
	const done = new Set(drain.done ?? []);
	const newer = (id: string) => anchor.has(id) || done.has(id) || (seen.has(id) && !stop.has(id));
	let start = pages.pageOf(drain.offset);
	if (drain.order === 'newest') {
		const first = await pages.get(1);
		if (!first) return drain;
		if (drain.total !== undefined && pages.total !== undefined) {
			start = pages.pageOf(drain.offset + pages.total - drain.total);
		} else {
			for (; start > 1; start--) {
				const page = await pages.get(start);
				if (!page) return drain;
				if (page.items.length > 0 && newer(idOf(page.items[0]))) break;
			}
		}
	}
	// Unknown messages before the first known newer one arrived after the drain began: they sit
	// above its place and are left to the read from the newest end, which meets them before any
	// remembered id. Taken here, they would be emitted again if the drain ends in a later poll.
	let placed = false;
	const deferred: IDataObject[] = [];
	const take = (item: IDataObject) => {
		taken.add(idOf(item));
		into.push(item);
	};
	const result = await walk(
		pages,
		drain.order,
		start,
		(item) => {
			const id = idOf(item);
			if (stop.has(id)) return 'stop';
			if (newer(id)) {
				placed = true;
				return 'skip';
			}
			if (taken.has(id) || deferred.some((d) => idOf(d) === id)) return 'skip';
			if (!placed) deferred.push(item);
			else take(item);
			return 'take';
		},
		drain.known,
	);
	// Nothing known met (all of it left the list): the deferred ones may be the gap itself; taken
	// rather than risk losing them.
	if (!placed) deferred.forEach(take);
	if (result.end !== 'time') return undefined;
	if (result.lastPage === undefined) return drain;
	return cursor(
		pages,
		drain.order,
		result.lastPage,
		result.lastItems!,
		drain.stop,
		drain.all === true,
		[...reversed(into.map(idOf)), ...(drain.done ?? [])],
		drain.known,
	);
}
