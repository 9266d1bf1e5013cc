import type { IDataObject, JsonObject } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import { LARGE_PAGE_SIZE, MAX_PAGE_SIZE } from './constants';
import { listChangingError, listTooLongError, pagingIgnoredError } from './listErrors';
import { walkList, type SizedPage } from './listWalk';

export type { SizedPage } from './listWalk';
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
 *   joins too once a later read holds one of its ids. Past a bound (listWalk.ts) it fails;
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
