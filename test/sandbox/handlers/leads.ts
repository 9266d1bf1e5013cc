/** /api/v1/leads */
import { invalid, ok, parseBody, parseQuery } from '../http';
import { route } from '../router';
import { LeadCreateBody, LeadListQuery, LeadUpdateBody, type LeadInput } from '../schemas';
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
		return churnAfter(ctx, reply, 'leads', {
			search: params.search,
			campaign_id: params.campaign_id,
		});
	}),
	route('POST', '/leads', (ctx: Ctx) => {
		noQuery(ctx);
		const input = parseBody(LeadCreateBody, ctx.body);
		checkCampaign(ctx.state, input);
		const lead = ctx.state.store.addLead(input);
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
		return ok(ctx.state.store.updateLead(lead, patch));
	}),
	route('DELETE', '/leads/:id', (ctx: Ctx) => {
		noQuery(ctx);
		const lead = requireLead(ctx);
		ctx.state.store.leads.delete(lead.id);
		return ok(ctx.state.config.deleteReturnsEmpty ? null : { id: lead.id, deleted: true });
	}),
];
