/**
 * Typed helpers over real HTTP (undici), for tests, benchmarks and tools that talk to a running sandbox:
 * sandboxControl(url) drives the /__sandbox endpoints; sandboxApi(url, key) sends /api/v1 requests.
 */
import { request, type Dispatcher } from 'undici';

import type { ChurnEvent, QueuedChurn } from './churn';
import type { Profile } from './profiles';
import type {
	ChurnEventInput,
	FaultInput,
	InsertMessagesInput,
	ReplyInput,
	SandboxConfig,
	SeedInput,
} from './schemas';
import type { Message, QueuedFault, RequestLogEntry, SandboxStats, SeedCounts } from './types';

export interface SandboxControl {
	health(): Promise<{ ok: true }>;
	/** Startup config, fresh data, empty log and counters, no faults, no rate windows. */
	reset(spec?: SeedInput): Promise<SeedCounts>;
	/** Replaces the data only. */
	seed(spec?: SeedInput): Promise<SeedCounts>;
	/** Without a patch: reads the config. With one: changes those keys and returns the whole config. */
	config(patch?: Partial<SandboxConfig>): Promise<SandboxConfig>;
	reply(input?: ReplyInput): Promise<Message>;
	insertMessages(input: InsertMessagesInput): Promise<{ ids: string[] }>;
	requests(since?: number): Promise<RequestLogEntry[]>;
	stats(): Promise<SandboxStats>;
	addFault(fault: FaultInput): Promise<QueuedFault>;
	faults(): Promise<QueuedFault[]>;
	clearFaults(): Promise<void>;
	/** Queues one churn event: it fires right after the `after`-th next list request. */
	addChurn(event: ChurnEventInput): Promise<QueuedChurn>;
	/** Every churn event so far (what left, arrived, changed status) and the queued ones. */
	churnLog(): Promise<{ listRequests: number; events: ChurnEvent[]; pending: QueuedChurn[] }>;
	profiles(): Promise<({ name: string } & Profile)[]>;
}

export interface ApiResponse<T = any> {
	status: number;
	headers: Record<string, string | string[] | undefined>;
	/** Parsed JSON, or undefined when the body is not JSON (see text). */
	body: T;
	text: string;
}

export interface RequestOptions {
	body?: unknown;
	query?: Record<string, string | number | boolean | undefined>;
	headers?: Record<string, string>;
	dispatcher?: Dispatcher;
}

const trimSlash = (url: string) => url.replace(/\/+$/, '');

async function send<T>(
	method: Dispatcher.HttpMethod,
	url: string,
	options: RequestOptions = {},
): Promise<ApiResponse<T>> {
	const target = new URL(url);
	for (const [key, value] of Object.entries(options.query ?? {})) {
		if (value !== undefined) target.searchParams.set(key, String(value));
	}
	const hasBody = options.body !== undefined;
	const res = await request(target, {
		method,
		headers: { ...(hasBody ? { 'content-type': 'application/json' } : {}), ...options.headers },
		body: hasBody ? JSON.stringify(options.body) : undefined,
		dispatcher: options.dispatcher,
	});
	const text = await res.body.text();
	let body: T;
	try {
		body = JSON.parse(text) as T;
	} catch {
		body = undefined as T;
	}
	return { status: res.statusCode, headers: res.headers, body, text };
}

export function sandboxControl(url: string, dispatcher?: Dispatcher): SandboxControl {
	const base = `${trimSlash(url)}/__sandbox`;
	const call = async <T>(
		method: Dispatcher.HttpMethod,
		path: string,
		body?: unknown,
		query?: RequestOptions['query'],
	) => {
		const res = await send<T>(method, base + path, { body, query, dispatcher });
		if (res.status >= 400) {
			const message = (res.body as { error?: { message?: string } })?.error?.message ?? res.text;
			throw new Error(`sandbox ${method} ${path} failed with ${res.status}: ${message}`);
		}
		return res.body;
	};
	return {
		health: () => call('GET', '/health'),
		reset: (spec = {}) => call('POST', '/reset', spec),
		seed: (spec = {}) => call('POST', '/seed', spec),
		config: (patch) => (patch ? call('POST', '/config', patch) : call('GET', '/config')),
		reply: (input = {}) => call('POST', '/reply', input),
		insertMessages: (input) => call('POST', '/messages', input),
		requests: (since) => call('GET', '/requests', undefined, { since }),
		stats: () => call('GET', '/stats'),
		addFault: (fault) => call('POST', '/faults', fault),
		faults: () => call('GET', '/faults'),
		clearFaults: async () => {
			await call('DELETE', '/faults');
		},
		addChurn: (event) => call('POST', '/churn', event),
		churnLog: () => call('GET', '/churn'),
		profiles: () => call('GET', '/profiles'),
	};
}

export interface SandboxApi {
	/** `path` is relative to /api/v1, e.g. '/leads'. Never throws on an HTTP error status. */
	request<T = any>(
		method: Dispatcher.HttpMethod,
		path: string,
		options?: RequestOptions,
	): Promise<ApiResponse<T>>;
	get<T = any>(path: string, query?: RequestOptions['query']): Promise<ApiResponse<T>>;
	post<T = any>(path: string, body?: unknown): Promise<ApiResponse<T>>;
	patch<T = any>(path: string, body?: unknown): Promise<ApiResponse<T>>;
	delete<T = any>(path: string): Promise<ApiResponse<T>>;
}

/** A client of the API itself, with `Authorization: Bearer <apiKey>` (omitted when apiKey is undefined). */
export function sandboxApi(url: string, apiKey?: string, dispatcher?: Dispatcher): SandboxApi {
	const base = `${trimSlash(url)}/api/v1`;
	const auth: Record<string, string> =
		apiKey === undefined ? {} : { authorization: `Bearer ${apiKey}` };
	const api: SandboxApi = {
		request: (method, path, options = {}) =>
			send(method, base + path, {
				dispatcher,
				...options,
				headers: { ...auth, ...options.headers },
			}),
		get: (path, query) => api.request('GET', path, { query }),
		post: (path, body) => api.request('POST', path, { body }),
		patch: (path, body) => api.request('PATCH', path, { body }),
		delete: (path) => api.request('DELETE', path),
	};
	return api;
}
