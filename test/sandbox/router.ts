/** A tiny method + path router with :params; tells "no such path" (404) from "wrong method" (405). */
import { ApiError, type Reply } from './http';

export interface RouteContext<State> {
	state: State;
	params: Record<string, string>;
	query: Record<string, string | string[]>;
	/** Parsed JSON body; undefined when there is none. */
	body: unknown;
	/** The caller's label (key0...), for per-key counters; never the key. */
	key: string;
}

export type Handler<State> = (ctx: RouteContext<State>) => Reply;

export interface Route<State> {
	method: string;
	path: string;
	handler: Handler<State>;
}

export function route<State>(method: string, path: string, handler: Handler<State>): Route<State> {
	return { method, path, handler };
}

function matchPath(pattern: string, path: string): Record<string, string> | undefined {
	const want = pattern.split('/');
	const got = path.split('/');
	if (want.length !== got.length) return undefined;
	const params: Record<string, string> = {};
	for (let i = 0; i < want.length; i++) {
		if (want[i].startsWith(':')) {
			if (got[i] === '') return undefined;
			try {
				params[want[i].slice(1)] = decodeURIComponent(got[i]);
			} catch {
				return undefined; // malformed %-escape: no such resource
			}
		} else if (want[i] !== got[i]) {
			return undefined;
		}
	}
	return params;
}

export class Router<State> {
	constructor(
		private readonly prefix: string,
		private readonly routes: Route<State>[],
	) {}

	/** The route pattern a request matches, e.g. 'GET /api/v1/leads/:id', for counters; undefined if none. */
	pattern(method: string, path: string): string | undefined {
		const r = this.routes.find((r) => r.method === method && matchPath(this.prefix + r.path, path));
		return r && `${method} ${this.prefix}${r.path}`;
	}

	/** The handler and params for a request; throws 404 or 405 (with Allow). */
	resolve(
		method: string,
		path: string,
	): { handler: Handler<State>; params: Record<string, string> } {
		const allowed: string[] = [];
		for (const r of this.routes) {
			const params = matchPath(this.prefix + r.path, path);
			if (!params) continue;
			if (r.method === method) return { handler: r.handler, params };
			allowed.push(r.method);
		}
		if (allowed.length > 0) {
			throw new ApiError(405, `Method ${method} not allowed on ${path}`, undefined, {
				Allow: allowed.join(', '),
			});
		}
		throw new ApiError(404, `Route ${method} ${path} not found`);
	}
}
