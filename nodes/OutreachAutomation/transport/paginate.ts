import type { IDataObject } from 'n8n-workflow';
import { NodeApiError } from 'n8n-workflow';

import { MAX_PAGE_SIZE } from './constants';
import type { ApiRequest, PageMeta, RequestContext } from './request';
import { apiRequest } from './request';

export interface Page {
	/** Items of this page not yielded before (deduplicated by `id`). */
	items: IDataObject[];
	page: number;
	meta?: PageMeta;
	/** Whether another page may follow. */
	more: boolean;
}

function asItems(data: unknown): IDataObject[] {
	if (Array.isArray(data)) return data as IDataObject[];
	if (data === undefined || data === null) return [];
	return [data as IDataObject];
}

function itemId(item: IDataObject): string | undefined {
	const id = item?.id;
	return id === undefined || id === null ? undefined : String(id);
}

/**
 * Walks a list endpoint page by page. Asks for `pageSize` items (the server may clamp it and says so
 * in `meta.per_page`), stops at `meta.total`, at a short or empty page, and never yields an id twice.
 * A server that ignores `page` (page 2 repeats what we have) is reported instead of looped on.
 */
export async function* walkPages(
	ctx: RequestContext,
	request: ApiRequest,
	pageSize = MAX_PAGE_SIZE,
): AsyncGenerator<Page> {
	const seen = new Set<string>();
	let received = 0;
	for (let page = 1; ; page++) {
		const { data, meta } = await apiRequest(ctx, {
			...request,
			qs: { ...request.qs, page, per_page: pageSize },
		});
		const all = asItems(data);
		const fresh = all.filter((item) => {
			const id = itemId(item);
			if (id === undefined) return true;
			if (seen.has(id)) return false;
			seen.add(id);
			return true;
		});
		received += all.length;
		if (page > 1 && all.length > 0 && fresh.length === 0) {
			throw new NodeApiError(
				ctx.getNode(),
				{ page, total: meta?.total ?? null },
				{
					message: 'The service returned the same items again for the next page: it seems to ignore paging',
					description: `Page ${page} repeated items already received (${seen.size} distinct so far${
						meta?.total !== undefined ? ` of ${meta.total}` : ''
					}). Stopped instead of looping or returning duplicates; narrow the request with filters.`,
					itemIndex: request.itemIndex,
				},
			);
		}
		const used = typeof meta?.per_page === 'number' && meta.per_page > 0 ? meta.per_page : pageSize;
		const total = typeof meta?.total === 'number' ? meta.total : undefined;
		const more = all.length > 0 && all.length >= used && (total === undefined || received < total);
		yield { items: fresh, page, meta, more };
		if (!more) return;
	}
}

/** Return All (limit undefined) or up to `limit` items, asking for no more than needed. */
export async function fetchList(
	ctx: RequestContext,
	request: ApiRequest,
	limit?: number,
): Promise<IDataObject[]> {
	const results: IDataObject[] = [];
	const pageSize = limit === undefined ? MAX_PAGE_SIZE : Math.min(limit, MAX_PAGE_SIZE);
	for await (const page of walkPages(ctx, request, pageSize)) {
		results.push(...page.items);
		if (limit !== undefined && results.length >= limit) return results.slice(0, limit);
	}
	return results;
}
