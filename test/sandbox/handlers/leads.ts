/** /api/v1/leads */
import { invalid, ok, parseBody, parseQuery } from '../http';
import { route } from '../router';
import {
	LeadCreateBody,
	LeadListQuery,
	LeadUpdateBody,
	type LeadInput,
	type SandboxConfig,
} from '../schemas';
import type { SandboxState } from '../state';
import { churnAfter, created, noQuery, paginate, requireLead, type Ctx } from './common';

/** campaign_id must name an existing campaign: a lead cannot join a campaign that is not there. */
function checkCampaign(state: SandboxState, input: LeadInput): void {
	const id = input.campaign_id;
	if (id != null && !state.store.campaigns.has(id))
		throw invalid([{ field: 'campaign_id', message: `no campaign ${id}` }]);
}

export const leadRoutes = [
	route('GET', '/leads', (ctx: Ctx) => {
		const params = parseQuery(LeadListQuery, ctx.query);
		const reply = paginate(
			ctx.state.store.findLeads(params, ctx.state.config.searchScope),
			params,
			ctx.state.config,
		);
		return churnAfter(
			ctx,
			reply,
			'leads',
			{
				search: params.search,
				campaign_id: params.campaign_id,
			},
			params,
		);
	}),
	route('POST', '/leads', (ctx: Ctx) => {
		noQuery(ctx);
		const input = parseBody(LeadCreateBody, ctx.body);
		checkCampaign(ctx.state, input);
		const lead = ctx.state.store.addLead(storedProfile(ctx.state.config, input));
		ctx.state.recorder.created('lead', ctx.key, ctx.body);
		return created(lead);
	}),
	route('GET', '/leads/:id', (ctx: Ctx) => {
		noQuery(ctx);
		return ok(requireLead(ctx));
	}),
	route('PATCH', '/leads/:id', (ctx: Ctx) => {
		noQuery(ctx);
		const lead = requireLead(ctx);
		const patch = parseBody(LeadUpdateBody, ctx.body);
		checkCampaign(ctx.state, patch);
		return ok(ctx.state.store.updateLead(lead, storedProfile(ctx.state.config, patch)));
	}),
	route('DELETE', '/leads/:id', (ctx: Ctx) => {
		noQuery(ctx);
		const lead = requireLead(ctx);
		ctx.state.store.leads.delete(lead.id);
		return ok(ctx.state.config.deleteReturnsEmpty ? null : { id: lead.id, deleted: true });
	}),
];

/**
 * The lead's linkedin_url as this service stores it (profileStorage): as sent, or rewritten the way
 * some services and imports do, which a client must still recognise as the same profile.
 */
function storedProfile<T extends { linkedin_url?: string }>(config: SandboxConfig, input: T): T {
	const url = input.linkedin_url;
	if (!url || config.profileStorage === 'as-sent') return input;
	const host = /^https?:\/\/(?:www\.)?linkedin\.com\//i;
	if (!host.test(url)) return input;
	const path = url.replace(host, '');
	const stored = {
		'no-scheme': `www.linkedin.com/${path}`,
		'country-host': `https://uk.linkedin.com/${path}`,
		'mobile-host': `https://m.linkedin.com/${path.replace(/\/?$/, '/')}`,
	}[config.profileStorage];
	return { ...input, linkedin_url: stored };
}
