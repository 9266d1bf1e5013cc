/**
 * /__sandbox/*: test controls. No auth, no rate limit, not in the request log. Answers are bare JSON
 * (no envelope); errors use the error envelope.
 */
import { parseQuery, type Reply } from '../http';
import { route } from '../router';
import { PROFILES } from '../profiles';
import { RequestsQuery } from '../schemas';
import type { Ctx } from './common';

const bare = (data: unknown, status = 200): Reply => ({ status, body: data });
// A control POST without a body means "no options".
const input = <T>(ctx: Ctx) => (ctx.body ?? {}) as T;

export const controlRoutes = [
	route('GET', '/health', () => bare({ ok: true })),
	route('POST', '/reset', (ctx: Ctx) => bare(ctx.state.reset(input(ctx)))),
	route('POST', '/seed', (ctx: Ctx) => bare(ctx.state.seed(input(ctx)))),
	route('GET', '/config', (ctx: Ctx) => bare(ctx.state.configure())),
	route('POST', '/config', (ctx: Ctx) => bare(ctx.state.configure(input(ctx)))),
	route('POST', '/reply', (ctx: Ctx) => bare(ctx.state.reply(input(ctx)), 201)),
	route('POST', '/messages', (ctx: Ctx) => bare(ctx.state.insertMessages(input(ctx)), 201)),
	route('GET', '/requests', (ctx: Ctx) =>
		bare(ctx.state.recorder.requests(parseQuery(RequestsQuery, ctx.query).since)),
	),
	route('GET', '/stats', (ctx: Ctx) => bare(ctx.state.recorder.snapshot())),
	route('GET', '/faults', (ctx: Ctx) => bare(ctx.state.faults.list())),
	route('POST', '/faults', (ctx: Ctx) => bare(ctx.state.addFault(input(ctx)), 201)),
	route('GET', '/churn', (ctx: Ctx) => bare(ctx.state.churn.log())),
	route('POST', '/churn', (ctx: Ctx) => bare(ctx.state.addChurn(input(ctx)), 201)),
	route('GET', '/profiles', () =>
		bare(
			Object.entries(PROFILES).map(([name, { description, config }]) => ({
				name,
				description,
				config,
			})),
		),
	),
	route('DELETE', '/faults', (ctx: Ctx) => {
		ctx.state.faults.clear();
		return bare({ cleared: true });
	}),
];
