/** /api/v1/messages */
import { invalid, notFound, parseBody, parseQuery, ok } from '../http';
import { route } from '../router';
import { MessageCreateBody, MessageListQuery } from '../schemas';
import { churnAfter, created, messageView, noQuery, paginate, type Ctx } from './common';

export const messageRoutes = [
	route('GET', '/messages', (ctx: Ctx) => {
		const params = parseQuery(MessageListQuery, ctx.query);
		const { config, store } = ctx.state;
		const reply = paginate(store.findMessages(params), params, config, messageView(config));
		const { lead_id, campaign_id, status } = params;
		return churnAfter(ctx, reply, 'messages', { lead_id, campaign_id, status }, params);
	}),
	route('POST', '/messages', (ctx: Ctx) => {
		noQuery(ctx);
		const input = parseBody(MessageCreateBody, ctx.body);
		const { config, store, recorder } = ctx.state;
		const lead = store.leads.get(input.lead_id);
		if (!lead) throw invalid([{ field: 'lead_id', message: `no lead ${input.lead_id}` }]);
		const message = store.addMessage({
			lead_id: lead.id,
			campaign_id: lead.campaign_id,
			step_index: null,
			direction: 'outbound',
			status: 'sent',
			// messageBodies 'normalized': stored as some services store text (line ends, runs of spaces).
			body:
				config.messageBodies === 'normalized'
					? input.body.replace(/\r\n?/g, '\n').replace(/[ \t]+/g, ' ')
					: input.body,
		});
		recorder.created('message', ctx.key, ctx.body);
		return created(messageView(config)(message));
	}),
	route('GET', '/messages/:id', (ctx: Ctx) => {
		noQuery(ctx);
		const message = ctx.state.store.getMessage(ctx.params.id);
		if (!message) throw notFound('Message', ctx.params.id);
		return ok(messageView(ctx.state.config)(message));
	}),
];
