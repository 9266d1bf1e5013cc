/**
 * The walk of a list read by page number while others may change it: which pages to read, in what
 * order and how often, and when the list is whole. Reading a page is the source's (transport/pages.ts).
 */
import type { IDataObject } from 'n8n-workflow';

import { MAX_PAGE_REQUESTS } from './constants';

/**
 * Extra page reads a walk may spend finding items that moved under it: this many, and one more per page
 * of the list. Past them the walk fails (listChangingError) instead of returning a list that may be short.
 */
const CHANGE_REREADS = 20;

/** A page as read at the size the server accepted. */
export interface SizedPage {
	items: IDataObject[];
	total?: number;
	perPage?: number;
	/** The size asked for in the end: lower than asked when the server refused a size. */
	size: number;
	key?: string;
}

/** Where walkList reads its pages, and the errors it fails with. */
export interface ListSource {
	/** Page `number` at `size` (the answer says the size finally asked, lower if one was refused). */
	page(number: number, size: number): Promise<SizedPage>;
	/** The size the server serves, learnt by the walk: asked for first next time. */
	remember(size: number): void;
	tooLong(requests: number, items: number): Error;
	pagingIgnored(page: number, distinct: number, total?: number): Error;
	changing(rereads: number, items: number): Error;
}

/** The walk of readList, on any source of pages (a fake one in the property tests). */
export async function walkList(
	source: ListSource,
	asked: number,
	limit?: number,
	first?: SizedPage,
): Promise<IDataObject[]> {
	const results: IDataObject[] = [];
	const seen = new Set<string>();
	/** Ids proven: every item that stayed the whole walk, up to these in list order, was read. */
	const proven = new Set<string>();
	let firstIds: string[] | undefined;
	let firstTotal: number | undefined;
	/** A later page that repeated page 1: the server may ignore `page`. */
	let doubt: { number: number; ids: string[]; total?: number } | undefined;
	let requests = 0;
	let size = asked;

	const add = (items: IDataObject[]): number => {
		let added = 0;
		for (const item of items) {
			if (limit !== undefined && results.length >= limit) break;
			const id = itemId(item);
			if (id !== undefined) {
				if (seen.has(id)) continue;
				seen.add(id);
			}
			results.push(item);
			added++;
		}
		return added;
	};

	// Page 1 as the caller already read it (readFirstPage): not asked again, at its size.
	let reuse = first;
	const fetch = async (number: number) => {
		let page: SizedPage;
		if (number === 1 && reuse) {
			page = reuse;
			reuse = undefined;
		} else {
			if (requests >= MAX_PAGE_REQUESTS) throw source.tooLong(requests, results.length);
			requests++;
			page = await source.page(number, size);
		}
		size = page.size;
		return page;
	};

	let served: number | undefined;
	/** The last page whose read ends in proven items, and the total that read gave. */
	let front = 0;
	let frontTotal: number | undefined;
	/** The page after `front` as read when it could not join: it joins once a read holds one of its ids. */
	let pending: { number: number; ids: string[]; total?: number; end: boolean } | undefined;
	let highest = 0;
	let rereads = 0;
	let number = 1;
	for (;;) {
		const { items, total, perPage } = await fetch(number);
		const ids = items.map((item) => itemId(item) ?? '');
		const added = add(items);
		if (limit !== undefined && results.length >= limit) break;

		const fresh = number > highest;
		highest = Math.max(highest, number);
		if (number === 1 && firstIds === undefined) {
			firstIds = ids;
			firstTotal = total;
		} else if (doubt && number === 1) {
			// Page 1 again as the later page was: the server ignores `page`. Else the list had moved.
			if (sameIds(ids, doubt.ids) && total === doubt.total)
				throw source.pagingIgnored(doubt.number, seen.size, total);
			doubt = undefined;
		} else if (
			fresh &&
			items.length > 0 &&
			added === 0 &&
			sameIds(ids, firstIds) &&
			total === firstTotal
		) {
			// The first page again, or the list moved by exactly a page: page 1 tells which.
			doubt = { number, ids, total };
			number = 1;
			continue;
		}

		// The size served, learnt from page 1 (and page 2 after a short page 1).
		let end = items.length === 0;
		if (served === undefined && !end) {
			let learnt = true;
			if (items.length >= size) served = size;
			else if (perPage !== undefined && perPage < size && items.length === perPage) {
				// The server said it served fewer than asked: that is its maximum.
				served = perPage;
			} else if (total !== undefined && results.length >= total) {
				end = true; // short first page and the total agrees: the whole list
				learnt = false;
			} else {
				// Short, and nothing says whether it is the end or a silent clamp: the next page tells.
				served = items.length;
				learnt = false;
			}
			if (learnt && (limit === undefined || served! < size)) source.remember(served!);
		} else if (served !== undefined && items.length < served) end = true;

		const joins =
			number === 1 ||
			ids.some((id) => proven.has(id)) ||
			(number === front + 1 &&
				(total === undefined || frontTotal === undefined || total === frontTotal));
		if (!joins) {
			// Items may have moved back onto pages already read: read the page before again.
			if (++rereads > CHANGE_REREADS + highest) {
				throw source.changing(rereads - 1, results.length);
			}
			if (number === front + 1) pending = { number, ids, total, end };
			number = Math.max(1, number - 1);
			continue;
		}
		for (const id of ids) proven.add(id);
		front = number;
		frontTotal = total;
		let done = end;
		// The page after, as read before it could join: this read reached into it, so it joins too.
		if (pending?.number === number + 1 && pending.ids.some((id) => proven.has(id))) {
			for (const id of pending.ids) proven.add(id);
			front = pending.number;
			frontTotal = pending.total;
			done = pending.end;
		}
		pending = undefined;
		if (done) break;
		number = front + 1;
	}
	return limit === undefined ? results : results.slice(0, limit);
}

function sameIds(ids: string[], other: string[] | undefined): boolean {
	return (
		other !== undefined && ids.length === other.length && ids.every((id, i) => id === other[i])
	);
}

function itemId(item: IDataObject): string | undefined {
	const id = item?.id;
	return id === undefined || id === null ? undefined : String(id);
}
