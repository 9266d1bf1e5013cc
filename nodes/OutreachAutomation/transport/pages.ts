import type { IDataObject, JsonObject } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import { LARGE_PAGE_SIZE, MAX_PAGE_REQUESTS, MAX_PAGE_SIZE } from './constants';
import { listTooLongError, pagingIgnoredError } from './errors';
import type { ApiRequest, PageMeta, RequestContext } from './request';
import { apiRequest, windowKeyOf } from './request';

/**
 * How often a span of pages is read again while the list keeps changing under the walk; past it the
 * walk goes on (a list that changes at every read cannot be read whole by offset paging).
 */
const MAX_REREAD_ROUNDS = 5;

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
 * Return All (limit undefined) or up to `limit` items, each id once. Nothing is taken on trust:
 * - page size: asks big (servers that allow it need far fewer requests), keeps what the server
 *   served (from `meta.per_page` or the count), falls back when a size is refused, remembers it;
 * - the end: an empty page, or a page shorter than the size served; `meta.total` only ends a walk
 *   that already holds that many items, and a count or a total that is missing, a string or
 *   negative is read as unknown;
 * - shifts: when the total drops between two pages (items deleted or leaving a filter), the pages
 *   before are read again, so nothing that moved back across a page boundary is skipped;
 * - a server that ignores `page`, or more pages than any list could need, is an error, never a
 *   short result. No recursion and no argument spreading: any number of items.
 */
export async function readList(
	ctx: RequestContext,
	request: ApiRequest,
	limit?: number,
	first?: SizedPage,
): Promise<IDataObject[]> {
	const results: IDataObject[] = [];
	const seen = new Set<string>();
	let firstIds: string[] = [];
	let requests = 0;
	let key: string | undefined;

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
	const fetch = async (number: number, asked: number) => {
		if (number === 1 && reuse) {
			const page = reuse;
			reuse = undefined;
			key = page.key;
			size = page.size;
			return page;
		}
		if (requests >= MAX_PAGE_REQUESTS) {
			throw listTooLongError(ctx.getNode(), requests, results.length, request);
		}
		requests++;
		const page = await pageAtSize(ctx, request, number, asked);
		key = page.key;
		size = page.size;
		return page;
	};

	const { key: knownKey } = await peekKey(ctx);
	key = knownKey;
	let size = firstSize(key, limit);

	let served: number | undefined;
	let lastTotal: number | undefined;
	for (let number = 1; ; number++) {
		const { items, total, perPage } = await fetch(number, size);

		if (number === 1) firstIds = items.map((item) => itemId(item) ?? '');
		const added = add(items);
		if (limit !== undefined && results.length >= limit) break;

		// Deletions between two reads move later items back across the page boundary: read the
		// pages before again (as many as the drop spans) and keep what they add. If the list changes
		// again meanwhile, an insertion can move such an item forward onto this page, read before it
		// got there: then the span is read once more, this page included, until one pass sees no change.
		let current = total;
		if (lastTotal !== undefined && current !== undefined && current < lastTotal && number > 1) {
			const perPageNow = served ?? size;
			let from = Math.max(1, number - Math.ceil((lastTotal - current) / perPageNow));
			let to = number - 1;
			for (let round = 0; round < MAX_REREAD_ROUNDS; round++) {
				let changed = false;
				for (let again = from; again <= to; again++) {
					const reread = await fetch(again, size);
					add(reread.items);
					if (reread.total === undefined || reread.total === current) continue;
					const drift = Math.abs(reread.total - current);
					from = Math.max(1, Math.min(from, again - Math.ceil(drift / perPageNow)));
					to = number;
					current = reread.total;
					changed = true;
				}
				if (!changed) break;
			}
		}
		lastTotal = current;

		if (items.length === 0) break;
		if (number > 1 && added === 0) {
			const ids = items.map((item) => itemId(item) ?? '');
			if (ids.length === firstIds.length && ids.every((id, i) => id === firstIds[i])) {
				throw pagingIgnoredError(
					ctx.getNode(),
					number,
					seen.size,
					total,
					request,
					'Stopped instead of looping or returning duplicates; narrow the request with filters.',
				);
			}
		}

		if (served === undefined) {
			if (items.length >= size) served = size;
			else if (perPage !== undefined && perPage < size && items.length === perPage) {
				// The server said it served fewer than asked: that is its maximum.
				served = perPage;
			} else if (total !== undefined && results.length >= total) {
				break; // short first page and the total agrees: the whole list
			} else {
				// Short, and nothing says whether it is the end or a silent clamp: the next page tells.
				served = items.length;
				continue;
			}
			if (limit === undefined || served < size) rememberSize(key, served);
			continue;
		}
		if (items.length < served) break;
	}
	return limit === undefined ? results : results.slice(0, limit);
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

/** The rate-limit window key of this credential, without a request (for remembered page sizes). */
async function peekKey(ctx: RequestContext): Promise<{ key?: string }> {
	return { key: await windowKeyOf(ctx) };
}
