import type { IDataObject, ILoadOptionsFunctions, INodeListSearchResult } from 'n8n-workflow';

import { PageWalker } from '../transport/pages';

const PAGE_SIZE = 50;

const text = (value: unknown) => (typeof value === 'string' ? value.trim() : '');

/**
 * What the list shows for an item: groups of fields, the words of a group joined by a space and the groups
 * by " · " ("Olivia Okafor · Foundry Ventures"), so a name and a company do not read as one name; then the ID.
 */
function label(item: IDataObject, groups: string[][]): string {
	const parts = groups
		.map((fields) =>
			fields
				.map((field) => text(item[field]))
				.filter(Boolean)
				.join(' '),
		)
		.filter(Boolean);
	return parts.length ? `${parts.join(' · ')} (${String(item.id)})` : String(item.id);
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
	fields: string[][],
	filter: string | undefined,
	token: string | undefined,
	filterLocally: boolean,
): Promise<INodeListSearchResult> {
	const wanted = filter?.trim().toLowerCase() || undefined;
	const qs = wanted && !filterLocally ? { search: wanted } : {};
	const walker = new PageWalker(ctx, { method: 'GET', path, qs }, { pageSize: PAGE_SIZE });
	const results: INodeListSearchResult['results'] = [];
	const maxPages = filterLocally && wanted ? MAX_LOCAL_PAGES : 1;
	let number = Number(token ?? 1) || 1;
	for await (const page of walker.pages(number)) {
		for (const item of page.items) {
			const name = label(item, fields);
			if (!filterLocally || !wanted || name.toLowerCase().includes(wanted)) {
				results.push({ name, value: String(item.id) });
			}
		}
		if (page.last) return { results };
		number++;
		if (results.length || walker.requests >= maxPages) break;
	}
	return { results, paginationToken: String(number) };
}

export async function searchLeads(
	this: ILoadOptionsFunctions,
	filter?: string,
	paginationToken?: string,
): Promise<INodeListSearchResult> {
	return await search(
		this,
		'/leads',
		[['first_name', 'last_name'], ['company']],
		filter,
		paginationToken,
		false,
	);
}

/** The campaign list has no documented search parameter, so the filter applies to each page here. */
export async function searchCampaigns(
	this: ILoadOptionsFunctions,
	filter?: string,
	paginationToken?: string,
): Promise<INodeListSearchResult> {
	return await search(this, '/campaigns', [['name']], filter, paginationToken, true);
}
