import type { IDataObject, JsonObject } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import { LARGE_PAGE_SIZE, MAX_PAGE_REQUESTS, MAX_PAGE_SIZE } from './constants';
import { listChangingError, listTooLongError, pagingIgnoredError } from './listErrors';
import type { ApiRequest, PageMeta, RequestContext } from './request';
import { apiRequest, windowKeyOf } from './request';

/** One page of a list endpoint, as the walker read it. */
export interface Page {
	number: number;
	/** The items as the server sent them. */
	items: IDataObject[];
	/** The items whose id this walk had not read before (items without an id count as new). */
	fresh: IDataObject[];
	/** The page size the server used: `meta.per_page` when it says, else the size asked for. */
	perPage: number;
	/** `meta.total` when the server gives it. */
	total?: number;
	/** Whether no page follows this one. */
	last: boolean;
	/** `meta` as the server sent it, for callers that read it their own way. */
	meta?: PageMeta;
}

/**
 * The one definition of the last page: an empty or short page, or one that reaches `meta.total`.
 * `meta.per_page` counts, not the size asked for: a server may clamp it.
 */
export function isLastPage(
	number: number,
	count: number,
	perPage: number,
	total?: number,
): boolean {
	return count === 0 || count < perPage || (total !== undefined && number * perPage >= total);
}

function itemId(item: IDataObject): string | undefined {
	const id = item?.id;
	return id === undefined || id === null ? undefined : String(id);
}

export interface WalkOptions {
	/** Items asked for per page (the server may give fewer and says so). */
	pageSize?: number;
	/** What the user can do when the server ignores paging, added to that error. */
	advice?: string;
}

/**
 * Reads the pages of one list endpoint for one caller: each page at most once (a page read again
 * comes from memory), in any order. The caller decides which pages to read and when to stop; the
 * walker decides how: page size, `meta` as hints, and a server that ignores `page` (a page after
 * the first that only repeats items already read) reported instead of looped on.
 */
export class PageWalker {
	private readonly read = new Map<number, Page>();

	private readonly ids = new Set<string>();

	constructor(
		private readonly ctx: RequestContext,
		private readonly request: ApiRequest,
		private readonly options: WalkOptions = {},
	) {}

	/** Whether `number` was read already (reading it again costs no request). */
	has(number: number): boolean {
		return this.read.has(number);
	}

	/** How many pages were requested so far. */
	get requests(): number {
		return this.read.size;
	}

	async page(number: number): Promise<Page> {
		const known = this.read.get(number);
		if (known) return known;
		const pageSize = this.options.pageSize ?? MAX_PAGE_SIZE;
		const { data, meta } = await apiRequest(this.ctx, {
			...this.request,
			qs: { ...this.request.qs, page: number, per_page: pageSize },
		});
		const items = Array.isArray(data)
			? (data as IDataObject[])
			: data === undefined || data === null
				? []
				: [data as IDataObject];
		const fresh = items.filter((item) => {
			const id = itemId(item);
			if (id === undefined) return true;
			if (this.ids.has(id)) return false;
			this.ids.add(id);
			return true;
		});
		if (this.read.size > 0 && items.length > 0 && fresh.length === 0) {
			throw pagingIgnoredError(
				this.ctx.getNode(),
				number,
				this.ids.size,
				meta?.total,
				this.request,
				this.options.advice,
			);
		}
		const perPage = metaCount(meta?.per_page) || pageSize;
		const total = metaCount(meta?.total);
		const page = {
			number,
			items,
			fresh,
			perPage,
			total,
			last: isLastPage(number, items.length, perPage, total),
			meta,
		};
		this.read.set(number, page);
		return page;
	}

	/** Pages `first`, `first + 1`, ... up to the last one. */
	async *pages(first = 1): AsyncGenerator<Page> {
		for (let number = first; ; number++) {
			const page = await this.page(number);
			yield page;
			if (page.last) return;
		}
	}
}

/** A count from `meta`: a number or a numeric string, never negative. */
export function metaCount(value: unknown): number | undefined {
	const n = typeof value === 'string' && /^\s*\d+\s*$/.test(value) ? Number(value) : value;
	return typeof n === 'number' && Number.isInteger(n) && n >= 0 ? n : undefined;
}

/** The page size each server served, by rate-limit window key: asked for first on the next walk. */
const servedSizes = new Map<string, number>();
const SERVED_SIZES_KEPT = 1000;

function rememberSize(key: string | undefined, size: number) {
	if (!key) return;
	servedSizes.delete(key);
	servedSizes.set(key, size);
	if (servedSizes.size > SERVED_SIZES_KEPT) servedSizes.delete(servedSizes.keys().next().value!);
}

/** For tests: forget the page sizes learnt. */
export function resetPageSizes(): void {
	servedSizes.clear();
}

/** The largest page a 400/422 about `per_page` allows ("per_page: must be at most 50"), if it says. */
function sizeRefused(error: unknown): number | undefined {
	const { httpCode, message, description } = error as {
		httpCode?: string;
		message?: string;
		description?: string;
	};
	if (httpCode !== '400' && httpCode !== '422') return undefined;
	const text = `${message ?? ''} ${description ?? ''}`;
	if (!/per_?page/i.test(text)) return undefined;
	const most = /per_?page[^0-9]*?(?:at most|maximum(?: is)?|max(?:imum)?|<=|≤)\s*(\d+)/i.exec(text);
	return most ? Math.max(1, Number(most[1])) : MAX_PAGE_SIZE;
}

/**
 * Extra page reads a walk may spend finding items that moved under it: this many, and one more per page
 * of the list. Past them the walk fails (listChangingError) instead of returning a list that may be short.
 */
const CHANGE_REREADS = 20;

/**
 * Return All (limit undefined) or up to `limit` items, each id once. Nothing is taken on trust:
 * - page size: asks big (servers that allow it need far fewer requests), keeps what the server
 *   served (from `meta.per_page` or the count), falls back when a size is refused, remembers it;
 * - the end: an empty page, or a page shorter than the size served; `meta.total` only ends a walk
 *   that already holds that many items, and a count or a total that is missing, a string or
 *   negative is read as unknown;
 * - change between reads, by content: the walk keeps the ids it has proven (every item that stayed,
 *   up to them in list order, was read). A page joins the proven part when it holds a proven id (it is
 *   one contiguous stretch of the list), or when it is the next page and the total is what it was at
 *   the read the proven part ends with (new items arrive first, so an unchanged total means nothing
 *   moved back across the boundary). Otherwise items may have moved back onto pages already read:
 *   the walk steps back, reading those pages again until one joins, then goes on; a page read earlier
 *   joins too once a later read holds one of its ids. Past CHANGE_REREADS (plus one a page) it fails;
 * - a server that ignores `page`, or more pages than any list could need, is an error, never a
 *   short result. No recursion and no argument spreading: any number of items.
 */
export async function readList(
	ctx: RequestContext,
	request: ApiRequest,
	limit?: number,
	first?: SizedPage,
): Promise<IDataObject[]> {
	let key = await windowKeyOf(ctx);
	const node = () => ctx.getNode();
	return await walkList(
		{
			page: async (number, size) => {
				const page = await pageAtSize(ctx, request, number, size);
				key = page.key;
				return page;
			},
			remember: (size) => rememberSize(key, size),
			tooLong: (requests, items) => listTooLongError(node(), requests, items, request),
			pagingIgnored: (page, distinct, total) =>
				pagingIgnoredError(
					node(),
					page,
					distinct,
					total,
					request,
					'Stopped instead of looping or returning duplicates; narrow the request with filters.',
				),
			changing: (rereads, items) => listChangingError(node(), rereads, items, request),
		},
		firstSize(key, limit),
		limit,
		first,
	);
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

/**
 * The page size to ask for first: what this credential's server served before (never more requests
 * than needed), else big for Return All, else no more than the limit.
 */
function firstSize(key: string | undefined, limit?: number): number {
	let size =
		limit === undefined
			? LARGE_PAGE_SIZE
			: Math.min(limit, Math.max(MAX_PAGE_SIZE, LARGE_PAGE_SIZE));
	const remembered = key ? servedSizes.get(key) : undefined;
	if (remembered !== undefined) size = Math.min(size, Math.max(remembered, 1));
	if (limit !== undefined && remembered === undefined) size = Math.min(limit, MAX_PAGE_SIZE);
	return size;
}

/** A page as read at the size the server accepted. */
export interface SizedPage {
	items: IDataObject[];
	total?: number;
	perPage?: number;
	/** The size asked for in the end: lower than asked when the server refused a size. */
	size: number;
	key?: string;
}

/**
 * One page, the one place that falls back on page size: a size refused with a 400/422 about
 * `per_page` is lowered to what the error allows (or the documented maximum), remembered for this
 * credential, and the page asked again. Any other error is the caller's.
 */
async function pageAtSize(
	ctx: RequestContext,
	request: ApiRequest,
	number: number,
	asked: number,
): Promise<SizedPage> {
	let size = asked;
	for (;;) {
		try {
			const { data, meta, key } = await apiRequest(ctx, {
				...request,
				qs: { ...request.qs, page: number, per_page: size },
			});
			const items = Array.isArray(data)
				? (data as IDataObject[])
				: data === undefined || data === null
					? []
					: [data as IDataObject];
			return {
				items,
				total: metaCount(meta?.total),
				perPage: metaCount(meta?.per_page),
				size,
				key,
			};
		} catch (error) {
			const allowed = size > 1 ? sizeRefused(error) : undefined;
			if (allowed === undefined || allowed >= size) {
				// Both return the given error unchanged when it is already theirs.
				if (error instanceof NodeApiError)
					throw new NodeApiError(ctx.getNode(), error as unknown as JsonObject);
				throw new NodeOperationError(ctx.getNode(), error as Error);
			}
			size = allowed;
			rememberSize(await windowKeyOf(ctx), allowed);
		}
	}
}

/**
 * The first page of a list, as large as this credential's server serves: for callers that decide from
 * it whether to read the rest (Create or Update's index).
 */
export async function readFirstPage(ctx: RequestContext, request: ApiRequest): Promise<SizedPage> {
	return await pageAtSize(ctx, request, 1, firstSize(await windowKeyOf(ctx)));
}
