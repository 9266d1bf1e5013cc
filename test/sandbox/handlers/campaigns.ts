/** /api/v1/campaigns, with the draft -> active <-> paused state machine and computed analytics. */
import { ApiError, ok, parseBody, parseQuery } from '../http';
import { route } from '../router';
import { CampaignCreateBody, CampaignListQuery, EmptyBody } from '../schemas';
import { created, noQuery, paginate, requireCampaign, type Ctx } from './common';

export const campaignRoutes = [
	route('GET', '/campaigns', (ctx: Ctx) => {
		const params = parseQuery(CampaignListQuery, ctx.query);
		return paginate(ctx.state.store.findCampaigns(params.status), params, ctx.state.config);
	}),
	route('POST', '/campaigns', (ctx: Ctx) => {
		noQuery(ctx);
		const campaign = ctx.state.store.addCampaign(parseBody(CampaignCreateBody, ctx.body));
		ctx.state.recorder.created('campaign', ctx.key, ctx.body);
		return created(campaign);
	}),
	route('GET', '/campaigns/:id', (ctx: Ctx) => {
		noQuery(ctx);
		return ok(requireCampaign(ctx));
	}),
	route('POST', '/campaigns/:id/start', (ctx: Ctx) => {
		noQuery(ctx);
		const campaign = requireCampaign(ctx);
		parseBody(EmptyBody, ctx.body);
		if (campaign.status === 'active')
			throw new ApiError(409, `Campaign ${campaign.id} is already active`);
		return ok(ctx.state.store.setCampaignStatus(campaign, 'active'));
	}),
	route('POST', '/campaigns/:id/pause', (ctx: Ctx) => {
		noQuery(ctx);
		const campaign = requireCampaign(ctx);
		parseBody(EmptyBody, ctx.body);
		if (campaign.status === 'paused')
			throw new ApiError(409, `Campaign ${campaign.id} is already paused`);
		if (campaign.status === 'draft')
			throw new ApiError(409, `Campaign ${campaign.id} is not active (it is a draft)`);
		return ok(ctx.state.store.setCampaignStatus(campaign, 'paused'));
	}),
	route('GET', '/campaigns/:id/analytics', (ctx: Ctx) => {
		noQuery(ctx);
		return ok(ctx.state.store.analytics(requireCampaign(ctx)));
	}),
];
