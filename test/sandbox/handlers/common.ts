/** What the API handlers share: paging, lookups that 404, the message view. */
import { notFound, ok, parseQuery, type Reply } from '../http';
import type { RouteContext } from '../router';
import { EmptyQuery, type PageParams, type SandboxConfig } from '../schemas';
import type { SandboxState } from '../state';
import type { Campaign, Lead, Message } from '../types';

export type Ctx = RouteContext<SandboxState>;

/**
 * One page of `items` (given oldest first) in the configured order. per_page above the maximum is clamped
 * and meta.per_page says so; pages past the end are empty; ignorePage mode always serves page 1.
 */
export function paginate<T>(items: T[], params: PageParams, config: SandboxConfig, view: (item: T) => unknown = (i) => i): Reply {
	const perPage = Math.min(params.per_page, config.maxPerPage);
	const page = config.ignorePage ? 1 : params.page;
	const ordered = config.order === 'newest' ? items.slice().reverse() : items;
	const data = ordered.slice((page - 1) * perPage, page * perPage).map(view);
	return { status: 200, body: { success: true, data, meta: { page, per_page: perPage, total: items.length } } };
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
