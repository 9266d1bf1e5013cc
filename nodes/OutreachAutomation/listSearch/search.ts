import type { ILoadOptionsFunctions, INodeListSearchResult } from 'n8n-workflow';

import { apiRequest } from '../transport/request';

const PAGE_SIZE = 50;

function label(item: Record<string, unknown>, fields: string[]): string {
	const parts = fields.map((field) => item[field]).filter((value) => typeof value === 'string' && value);
	return parts.length ? `${parts.join(' ')} (${String(item.id)})` : String(item.id);
}

/** Pages read per call when the filter applies here: enough to find a match without a long wait. */
const MAX_LOCAL_PAGES = 5;

/**
 * Resource-locator results from a list endpoint; the next page number is the pagination token.
 * When the server cannot search (`filterLocally`), several pages are read so a match further down
 * shows up without the user clicking through empty pages.
 */
async function search(
	ctx: ILoadOptionsFunctions,
	path: string,
	fields: string[],
	filter: string | undefined,
	token: string | undefined,
	filterLocally: boolean,
): Promise<INodeListSearchResult> {
	const wanted = filter?.trim().toLowerCase() || undefined;
	const results: INodeListSearchResult['results'] = [];
	let page = Number(token ?? 1) || 1;
	for (let read = 0; read < (filterLocally && wanted ? MAX_LOCAL_PAGES : 1); read++) {
		const qs: Record<string, string | number> = { page, per_page: PAGE_SIZE };
		if (wanted && !filterLocally) qs.search = wanted;
		const { data, meta } = await apiRequest(ctx, { method: 'GET', path, qs });
		const items = (Array.isArray(data) ? data : []) as Array<Record<string, unknown>>;
		for (const item of items) {
			const name = label(item, fields);
			if (!filterLocally || !wanted || name.toLowerCase().includes(wanted)) {
				results.push({ name, value: String(item.id) });
			}
		}
		const total = typeof meta?.total === 'number' ? meta.total : undefined;
		const perPage = typeof meta?.per_page === 'number' ? meta.per_page : PAGE_SIZE;
		const more = items.length >= perPage && (total === undefined || page * perPage < total);
		if (!more) return { results };
		page++;
		if (results.length) break;
	}
	return { results, paginationToken: String(page) };
}

export async function searchLeads(
	this: ILoadOptionsFunctions,
	filter?: string,
	paginationToken?: string,
): Promise<INodeListSearchResult> {
	return await search(this, '/leads', ['first_name', 'last_name', 'company'], filter, paginationToken, false);
}

/** The campaign list has no documented search parameter, so the filter applies to each page here. */
export async function searchCampaigns(
	this: ILoadOptionsFunctions,
	filter?: string,
	paginationToken?: string,
): Promise<INodeListSearchResult> {
	return await search(this, '/campaigns', ['name'], filter, paginationToken, true);
}
