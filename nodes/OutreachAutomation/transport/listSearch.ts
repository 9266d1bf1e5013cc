import type { ILoadOptionsFunctions, INodeListSearchResult } from 'n8n-workflow';

import { apiRequest } from './request';

const PAGE_SIZE = 50;

function label(item: Record<string, unknown>, fields: string[]): string {
	const parts = fields.map((field) => item[field]).filter((value) => typeof value === 'string' && value);
	return parts.length ? `${parts.join(' ')} (${String(item.id)})` : String(item.id);
}

/** A page of a list endpoint as resource-locator results; the next page number is the token. */
async function search(
	ctx: ILoadOptionsFunctions,
	path: string,
	fields: string[],
	filter: string | undefined,
	token: string | undefined,
	filterLocally: boolean,
): Promise<INodeListSearchResult> {
	const page = Number(token ?? 1) || 1;
	const qs: Record<string, string | number> = { page, per_page: PAGE_SIZE };
	if (filter && !filterLocally) qs.search = filter;
	const { data, meta } = await apiRequest(ctx, { method: 'GET', path, qs });
	const items = (Array.isArray(data) ? data : []) as Array<Record<string, unknown>>;
	const wanted = filter?.toLowerCase();
	const results = items
		.map((item) => ({ name: label(item, fields), value: String(item.id) }))
		.filter((result) => !filterLocally || !wanted || result.name.toLowerCase().includes(wanted));
	const total = typeof meta?.total === 'number' ? meta.total : undefined;
	const perPage = typeof meta?.per_page === 'number' ? meta.per_page : PAGE_SIZE;
	const more = items.length >= perPage && (total === undefined || page * perPage < total);
	return { results, paginationToken: more ? String(page + 1) : undefined };
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
