import type { IDataObject } from 'n8n-workflow';

import { MAX_PAGE_SIZE } from './constants';
import { pagingIgnoredError } from './errors';
import type { ApiRequest, PageMeta, RequestContext } from './request';
import { apiRequest } from './request';

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
		const perPage =
			typeof meta?.per_page === 'number' && meta.per_page > 0 ? meta.per_page : pageSize;
		const total = typeof meta?.total === 'number' ? meta.total : undefined;
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

/** Return All (limit undefined) or up to `limit` items, each id once, asking for no more than needed. */
export async function readList(
	ctx: RequestContext,
	request: ApiRequest,
	limit?: number,
): Promise<IDataObject[]> {
	const results: IDataObject[] = [];
	const pageSize = limit === undefined ? MAX_PAGE_SIZE : Math.min(limit, MAX_PAGE_SIZE);
	const walker = new PageWalker(ctx, request, {
		pageSize,
		advice: 'Stopped instead of looping or returning duplicates; narrow the request with filters.',
	});
	for await (const page of walker.pages()) {
		results.push(...page.fresh);
		if (limit !== undefined && results.length >= limit) return results.slice(0, limit);
	}
	return results;
}
