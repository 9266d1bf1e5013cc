/**
 * The sandbox API server: the outreach API of ../../shared/spec (with the design note's choices) in memory,
 * over real HTTP on 127.0.0.1, with its rate limit, strict validation, fault injection and test controls.
 *
 *   const sandbox = await startSandbox({ rateLimit: 5, windowMs: 500 });
 *   ...fetch(`${sandbox.url}/api/v1/leads`, { headers: { Authorization: `Bearer ${sandbox.apiKey}` } })
 *   await sandbox.stop();
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

import type { ChurnEvent, QueuedChurn } from './churn';
import { styleError } from './error-styles';
import { faultReply } from './faults';
import { campaignRoutes } from './handlers/campaigns';
import { controlRoutes } from './handlers/control';
import { leadRoutes } from './handlers/leads';
import { messageRoutes } from './handlers/messages';
import {
	ApiError,
	errorReply,
	failure,
	parseBody,
	parseJsonBody,
	queryObject,
	readBody,
	sendJson,
	sendRaw,
	tryParseJson,
	type RawBody,
	type Reply,
} from './http';
import { PROFILES } from './profiles';
import { rateLimitHeaders, retryAfterHeader, secondsUntil } from './rate-limit';
import { Router } from './router';
import {
	DEFAULT_OPTIONS,
	OptionsSchema,
	type ChurnEventInput,
	type FaultInput,
	type InsertMessagesInput,
	type ReplyInput,
	type SandboxConfig,
	type SandboxOptions,
	type SeedInput,
} from './schemas';
import { keyLabel, SandboxState } from './state';
import type { Store } from './store';
import type { Message, QueuedFault, RequestLogEntry, SandboxStats, SeedCounts } from './types';

export { DEMO_API_KEY, DEFAULT_CONFIG, DEFAULT_OPTIONS } from './schemas';
export type { SandboxConfig, SandboxOptions } from './schemas';
export type * from './types';

export const HOST = '127.0.0.1';
export const API_PREFIX = '/api/v1';
export const CONTROL_PREFIX = '/__sandbox';

export interface Sandbox {
	/** e.g. http://127.0.0.1:41234 (no trailing slash); the API is under `${url}/api/v1`. */
	readonly url: string;
	readonly port: number;
	/** The first configured API key. */
	readonly apiKey: string;
	readonly apiKeys: readonly string[];
	/** The options it was started with (reset() returns to them). */
	readonly options: SandboxOptions;
	/** Direct access to the data, for assertions. */
	readonly store: Store;
	/** The label logs and stats use for a configured key (key0, key1...). */
	keyLabel(key: string): string;
	/** Reads the live config, or changes part of it (like POST /__sandbox/config). */
	config(patch?: Partial<SandboxConfig>): SandboxConfig;
	reset(spec?: SeedInput): SeedCounts;
	seed(spec?: SeedInput): SeedCounts;
	reply(input?: ReplyInput): Message;
	insertMessages(input: InsertMessagesInput): { ids: string[] };
	addFault(fault: FaultInput): QueuedFault;
	clearFaults(): void;
	/** Queues one churn event (like POST /__sandbox/churn). */
	addChurn(event: ChurnEventInput): QueuedChurn;
	/** What churned so far, and what is queued (like GET /__sandbox/churn). */
	churnLog(): { listRequests: number; events: ChurnEvent[]; pending: QueuedChurn[] };
	requests(since?: number): RequestLogEntry[];
	stats(): SandboxStats;
	/** How many API requests arrived so far (what stats().requests says, without the copy). */
	apiRequests(): number;
	/** Closes the server and every connection, keep-alive ones included. */
	stop(): Promise<void>;
}

/** Connections waiting to be accepted (the kernel caps it at net.core.somaxconn). */
const ACCEPT_BACKLOG = 4096;
const apiRouter = new Router(API_PREFIX, [...leadRoutes, ...campaignRoutes, ...messageRoutes]);
const controlRouter = new Router(CONTROL_PREFIX, controlRoutes);
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

function send(res: ServerResponse, reply: Reply): void {
	if (reply.status === 0) res.destroy();
	else if (reply.raw !== undefined) sendRaw(res, reply.status, reply.raw, reply.headers);
	else sendJson(res, reply.status, reply.body, reply.headers);
}

/** The Date header on the server's clock, only when that clock is skewed (Node sends the real one otherwise). */
const skewedDate = (config: SandboxConfig, now: number): Record<string, string> =>
	config.clockSkewMs === 0 ? {} : { Date: new Date(now + config.clockSkewMs).toUTCString() };

/** Routes and runs a handler; every failure becomes an error reply. */
function dispatch(
	state: SandboxState,
	router: Router<SandboxState>,
	req: IncomingMessage,
	url: URL,
	raw: RawBody,
	key = 'control',
): Reply {
	try {
		const method = req.method ?? 'GET';
		const { handler, params } = router.resolve(method, url.pathname);
		// Bodies of GET and DELETE are ignored, as most servers do.
		const body = BODY_METHODS.has(method)
			? parseJsonBody(raw, req.headers['content-type'])
			: undefined;
		return handler({ state, params, query: queryObject(url.searchParams), body, key });
	} catch (error) {
		return errorReply(error);
	}
}

/** An /api/v1 request: log, latency, rate limit, auth, faults, then the handler. */
async function handleApi(
	state: SandboxState,
	req: IncomingMessage,
	res: ServerResponse,
	url: URL,
): Promise<void> {
	const method = req.method ?? 'GET';
	const query = queryObject(url.searchParams);
	const entry = state.recorder.begin(
		method,
		url.pathname,
		query,
		apiRouter.pattern(method, url.pathname),
	);
	// Fires after every response too; finish() only records the first outcome, so this catches lost clients.
	res.on('close', () => state.recorder.finish(entry, 0));
	const raw = await readBody(req);
	entry.body = tryParseJson(raw.text);
	if (state.config.htmlSite) {
		// A website at the Base URL: every path is a page it does not have.
		state.recorder.finish(entry, 404);
		return send(res, {
			status: 404,
			body: undefined,
			raw: '<!doctype html><html><head><title>Page not found</title></head><body><h1>Page not found</h1><p>Sorry, this page does not exist.</p></body></html>',
			headers: { 'Content-Type': 'text/html; charset=utf-8' },
		});
	}
	const latency = state.latency();
	if (latency > 0) await sleep(latency);

	const { config } = state;
	const authorization = req.headers.authorization;
	const caller = state.identify(authorization);
	entry.key = caller.label;
	const now = Date.now();
	const window = state.limiter.hit(caller.bucket, now, config);
	entry.windowEnd = window.resetAt;
	const limitHeaders = rateLimitHeaders(window, now, config);
	const respond = (reply: Reply, fault?: string) => {
		const shaped = styleError(reply, config, { authorization, key: caller.token });
		state.recorder.finish(entry, shaped.status, fault);
		send(res, { ...shaped, headers: { ...skewedDate(config, now), ...shaped.headers } });
		// After sending: list churn must not touch the page just served.
		reply.after?.();
	};
	const run = () => dispatch(state, apiRouter, req, url, raw, caller.label);

	if (!window.allowed) {
		// rateLimitTiming 'after' plays a gateway that counts late: the operation runs, its answer is a 429.
		const ran = config.rateLimitTiming === 'after' && caller.valid ? run() : undefined;
		if (ran) state.recorder.rateLimitedAfterRun();
		const retryAfter = secondsUntil(window.resetAt, now, config.resetRounding);
		const headers = { ...limitHeaders, ...retryAfterHeader(window.resetAt, now, config) };
		return respond({
			...failure(429, `Rate limit exceeded, retry in ${retryAfter} s`, undefined, headers),
			after: ran?.after,
		});
	}
	if (!caller.valid)
		return respond(failure(401, 'Missing or invalid API key', undefined, limitHeaders));
	const fault = state.faults.pick({ method, path: url.pathname, query }, config);
	if (fault && 'kind' in fault.action && fault.action.kind === 'slow') {
		// A request the server sits on (a stuck worker, a slow query), then runs and answers as usual.
		await sleep(fault.action.delayMs ?? 0);
		if (res.destroyed) return;
		const reply = run();
		return respond({ ...reply, headers: { ...limitHeaders, ...reply.headers } }, fault.label);
	}
	if (fault && !fault.after)
		return respond(faultReply(fault.action, limitHeaders, config, now), fault.label);
	const reply = run();
	if (fault) {
		// An "after" fault: the operation ran, but the client never sees its own answer.
		const replaced = faultReply(fault.action, limitHeaders, config, now, reply);
		if (replaced.status === 429) state.recorder.rateLimitedAfterRun();
		return respond({ ...replaced, after: reply.after }, fault.label);
	}
	respond({ ...reply, headers: { ...limitHeaders, ...reply.headers } });
}

async function handle(
	state: SandboxState,
	req: IncomingMessage,
	res: ServerResponse,
): Promise<void> {
	const url = new URL(req.url ?? '/', 'http://sandbox');
	const path = url.pathname;
	if (path === API_PREFIX || path.startsWith(`${API_PREFIX}/`))
		return handleApi(state, req, res, url);
	const raw = await readBody(req);
	if (path.startsWith(`${CONTROL_PREFIX}/`))
		return send(res, dispatch(state, controlRouter, req, url, raw));
	send(res, errorReply(new ApiError(404, `Route ${req.method} ${path} not found`)));
}

/**
 * Options given as undefined mean "the default", as for the CLI's unset flags. The options given win over
 * the profile's values, which win over the defaults.
 */
function resolveOptions(options: Partial<SandboxOptions>): {
	resolved: SandboxOptions;
	explicit: Partial<SandboxConfig>;
} {
	const given = Object.fromEntries(
		Object.entries(options).filter(([, v]) => v !== undefined),
	) as Partial<SandboxOptions>;
	const profile = given.profile !== undefined ? PROFILES[given.profile]?.config : undefined;
	try {
		const resolved = parseBody(OptionsSchema, { ...DEFAULT_OPTIONS, ...profile, ...given });
		const { port: _port, apiKeys: _keys, seed: _seed, ...explicit } = given;
		return { resolved, explicit };
	} catch (error) {
		throw new Error(
			`Invalid sandbox options: ${(error as Error).message.replace(/^Validation failed: /, '')}`,
		);
	}
}

export async function startSandbox(options: Partial<SandboxOptions> = {}): Promise<Sandbox> {
	const { resolved, explicit } = resolveOptions(options);
	const state = new SandboxState(resolved, explicit);
	const server = createServer((req, res) => {
		handle(state, req, res).catch((error) => send(res, errorReply(error)));
	});
	// Seeding a large store blocks the event loop for seconds; a short keep-alive would then race the client's
	// next request on the idle socket (ECONNRESET). stop() closes idle sockets anyway.
	server.keepAliveTimeout = 60_000;
	await new Promise<void>((resolve, reject) => {
		server.once('error', reject);
		// A deep accept queue: n8n opens a new connection per request, and 1,000 at once against Node's
		// default of 511 (while the sandbox is busy) had connections dropped and retried by TCP 1, 3 and
		// 7 s later. A real API behind its load balancer does not do that.
		server.listen({ port: resolved.port, host: HOST, backlog: ACCEPT_BACKLOG }, () => {
			server.off('error', reject);
			resolve();
		});
	});
	const { port } = server.address() as AddressInfo;
	let stopping: Promise<void> | undefined;

	return {
		url: `http://${HOST}:${port}`,
		port,
		apiKey: resolved.apiKeys[0],
		apiKeys: resolved.apiKeys,
		options: resolved,
		store: state.store,
		keyLabel: (key) => {
			const index = resolved.apiKeys.indexOf(key);
			if (index < 0) throw new Error('Not a configured API key');
			return keyLabel(index);
		},
		config: (patch) => state.configure(patch),
		reset: (spec) => state.reset(spec),
		seed: (spec) => state.seed(spec),
		reply: (input) => state.reply(input),
		insertMessages: (input) => state.insertMessages(input),
		addFault: (fault) => state.addFault(fault),
		clearFaults: () => state.faults.clear(),
		addChurn: (event) => state.addChurn(event),
		churnLog: () => state.churn.log(),
		requests: (since) => state.recorder.requests(since),
		stats: () => state.recorder.snapshot(),
		apiRequests: () => state.recorder.count(),
		stop: () =>
			(stopping ??= new Promise<void>((resolve) => {
				server.close(() => resolve());
				server.closeAllConnections();
			})),
	};
}
