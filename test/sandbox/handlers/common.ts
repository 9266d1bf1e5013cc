/** What the API handlers share: paging, lookups that 404, the message view. */
import type { ChurnResource } from '../churn';
import { invalid, notFound, ok, parseQuery, type Reply } from '../http';
import type { RouteContext } from '../router';
import { EmptyQuery, type PageParams, type SandboxConfig } from '../schemas';
import type { SandboxState } from '../state';
import type { Campaign, Lead, Message } from '../types';

export type Ctx = RouteContext<SandboxState>;

/**
 * One page of `items` (given oldest first) in the configured order. per_page above the maximum is clamped
 * (or refused, with perPageOverMax); pages past the end are empty; ignorePage mode always serves page 1.
 * meta is what the config says it is: exact by default, or one of the other readings of the spec.
 */
export function paginate<T>(
	items: T[],
	params: PageParams,
	config: SandboxConfig,
	view: (item: T) => unknown = (i) => i,
): Reply {
	if (params.per_page > config.maxPerPage && config.perPageOverMax !== 'clamp') {
		const status = config.perPageOverMax === 'reject-400' ? 400 : 422;
		throw invalid([{ field: 'per_page', message: `must be at most ${config.maxPerPage}` }], status);
	}
	const perPage = config.fixedPerPage || Math.min(params.per_page, config.maxPerPage);
	const page = config.ignorePage ? 1 : params.page;
	const ordered = config.order === 'newest' ? items.slice().reverse() : items;
	const data = ordered.slice((page - 1) * perPage, page * perPage).map(view);
	const meta = listMeta(config, page, perPage, params.per_page, items.length);
	return { status: 200, body: { success: true, data, ...(meta ? { meta } : {}) } };
}

function listMeta(
	config: SandboxConfig,
	page: number,
	used: number,
	requested: number,
	total: number,
) {
	if (config.metaStyle === 'absent') return undefined;
	const perPage = { used, requested, string: String(used), absent: undefined }[config.metaPerPage];
	const reported = {
		exact: total,
		string: String(total),
		negative: -1,
		low: Math.floor(total / 2),
		high: total * 2 + 1,
		absent: undefined,
	}[config.metaTotal];
	return {
		page,
		...(perPage !== undefined ? { per_page: perPage } : {}),
		...(reported !== undefined ? { total: reported } : {}),
	};
}

/**
 * Lets list churn (if any is due) change the list once this page has been taken; `params` place the
 * reader (the end of the page just served), so churn can remove on either side of it.
 */
export function churnAfter(
	ctx: Ctx,
	reply: Reply,
	resource: ChurnResource,
	filter: Record<string, string | undefined>,
	params: PageParams,
): Reply {
	const { state } = ctx;
	const { config } = state;
	const perPage = config.fixedPerPage || Math.min(params.per_page, config.maxPerPage);
	const end = (config.ignorePage ? 1 : params.page) * perPage;
	return {
		...reply,
		after: () =>
			state.churn.onListRead(
				{ resource, filter, end, newestFirst: config.order === 'newest' },
				state.store,
				config,
			),
	};
}

/** Endpoints that take no query parameters reject any: a stray parameter is a client bug. */
export function noQuery(ctx: Ctx): void {
	parseQuery(EmptyQuery, ctx.query);
}

export function requireLead(ctx: Ctx): Lead {
	const lead = ctx.state.store.leads.get(ctx.params.id);
	if (!lead) throw notFound('Lead', ctx.params.id);
	return lead;
}

export function requireCampaign(ctx: Ctx): Campaign {
	const campaign = ctx.state.store.campaigns.get(ctx.params.id);
	if (!campaign) throw notFound('Campaign', ctx.params.id);
	return campaign;
}

/** Messages as the wire shows them: without created_at when the sandbox runs without timestamps. */
export function messageView(config: SandboxConfig) {
	return (message: Message): Message => {
		if (config.timestamps) return { ...message };
		const { created_at: _hidden, ...rest } = message;
		return rest;
	};
}

export const created = (data: unknown) => ok(data, 201);
