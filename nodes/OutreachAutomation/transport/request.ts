import type {
	ICredentialDataDecryptedObject,
	IDataObject,
	IHttpRequestMethods,
	IHttpRequestOptions,
	ILoadOptionsFunctions,
	IPollFunctions,
	IExecuteFunctions,
	IN8nHttpFullResponse,
} from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import {
	API_PREFIX,
	CREDENTIAL_TYPE,
	RATE_LIMIT_MAX_RETRIES,
	RATE_LIMIT_MAX_TOTAL_WAIT_MS,
	SERVER_ERROR_BASE_DELAY_MS,
	SERVER_ERROR_MAX_RETRIES,
} from './constants';
import { checkedBaseUrl, credentialProblem, normalizeBaseUrl, windowKey } from './baseUrl';
import { networkFailure } from './network';
import { redactError, rememberSecret } from './redact';
import type { RequestTarget } from './errors';
import {
	cancelledError,
	httpError,
	networkError,
	notEnvelopeError,
	rateLimitError,
	withdrawnError,
} from './errors';
import { now as currentTime, pause, random } from './clock';
import { acquireSlot, cancelSlot, keyProgress, markExhausted, releaseSlot } from './pacing';
import { gaveUpOnRateLimit, retriedAfter429, waitBegins, waitEnds } from './report';

/** Every n8n context our nodes run requests from. */
export type RequestContext = IExecuteFunctions | ILoadOptionsFunctions | IPollFunctions;

export interface ApiRequest extends RequestTarget {
	method: IHttpRequestMethods;
	/** Path below /api/v1, starting with "/"; ids already URL-encoded. */
	path: string;
	qs?: IDataObject;
	body?: IDataObject;
	/** Whether a 5xx or a lost answer may be retried; by default only GET, HEAD and PATCH are. */
	safeToRepeat?: boolean;
	/** The node's Request Options (timeout, proxy, ignore SSL issues). */
	transport?: Pick<IHttpRequestOptions, 'timeout' | 'proxy' | 'skipSslCertificateValidation'>;
	/**
	 * Completes the request (path, query, body) once it has its place in the rate-limit window:
	 * reading parameters is slow enough to matter for hundreds of items. Its errors (bad input)
	 * give the place back, unused.
	 */
	prepare?: () => Promise<Partial<Pick<ApiRequest, 'path' | 'qs' | 'body' | 'id'>>>;
}

/** n8n's own default for declarative nodes: a request that hangs longer fails instead of blocking. */
const DEFAULT_TIMEOUT_MS = 300_000;

export interface PageMeta {
	page?: number;
	per_page?: number;
	total?: number;
}

export interface ApiResponse {
	data: unknown;
	meta?: PageMeta;
	/** Whether the envelope had a `data` field at all. */
	hasData?: boolean;
	/** The rate-limit window's key: one per (normalised origin, API key), never the key itself. */
	key?: string;
}

/**
 * n8n's cancel signal (the user pressed Stop, or the execution timed out). Every execution context
 * of n8n 1.x and 2.x has it; guarded for contexts that do not.
 */
export function cancelSignal(ctx: RequestContext): AbortSignal | undefined {
	const get = (ctx as { getExecutionCancelSignal?: () => AbortSignal | undefined })
		.getExecutionCancelSignal;
	return typeof get === 'function' ? get.call(ctx) : undefined;
}

/**
 * Per node run, a signal that ends the waits of its requests not sent yet (for the rate limit, or
 * before a repeat), never a request under way; see withdrawWaits.
 */
const withdrawals = new WeakMap<object, AbortSignal>();

/**
 * From now on, `signal` aborting withdraws the node run's requests still waiting: they fail with a
 * WithdrawnError, unsent. It must abort on n8n's cancel signal too.
 */
export function withdrawWaits(ctx: RequestContext, signal: AbortSignal): void {
	withdrawals.set(ctx, signal);
}

/**
 * Whether a 429 shows that the request did not run: the API's own error envelope, which its rate
 * limiter answers before running anything. Any other 429 (a gateway's or proxy's page, problem+json,
 * plain text, no body) may come from something in front of the API that counts after forwarding.
 */
function refusedBeforeRunning(body: unknown): boolean {
	return (
		typeof body === 'object' &&
		body !== null &&
		!Array.isArray(body) &&
		(body as { success?: unknown }).success === false
	);
}

interface Connection {
	baseUrl: string;
	key: string;
	credentials: ICredentialDataDecryptedObject;
}

/**
 * The credential, read once per n8n context (one node run, one poll, one picker search): in a real
 * n8n every read is a database query and a decryption, which for 500 items came to most of the time
 * before the first request, and for a poll to a good part of each page's time.
 */
const credentialsByContext = new WeakMap<object, Promise<ICredentialDataDecryptedObject>>();

async function credentialsOf(ctx: RequestContext): Promise<ICredentialDataDecryptedObject> {
	let credentials = credentialsByContext.get(ctx);
	if (!credentials) {
		credentials = ctx.getCredentials(CREDENTIAL_TYPE);
		credentialsByContext.set(ctx, credentials);
		credentials.catch(() => credentialsByContext.delete(ctx));
	}
	return await credentials;
}

async function connection(ctx: RequestContext, target: RequestTarget): Promise<Connection> {
	const credentials = await credentialsOf(ctx);
	rememberSecret(credentials.apiKey);
	const problem = credentialProblem(credentials.baseUrl, credentials.apiKey);
	if (problem) {
		const { message, description } = problem;
		const error = new NodeOperationError(ctx.getNode(), message, {
			description,
			itemIndex: target.itemIndex,
		});
		throw redactError(error);
	}
	const baseUrl = normalizeBaseUrl(credentials.baseUrl);
	return { baseUrl, key: windowKey(baseUrl, String(credentials.apiKey).trim()), credentials };
}

/** The rate-limit window key of the context's credential (undefined when it cannot be read). */
export async function windowKeyOf(ctx: RequestContext): Promise<string | undefined> {
	try {
		const credentials = await credentialsOf(ctx);
		const baseUrl = checkedBaseUrl(credentials.baseUrl);
		return baseUrl ? windowKey(baseUrl, String(credentials.apiKey ?? '').trim()) : undefined;
	} catch {
		return undefined;
	}
}

/** Methods that can be sent again after a 5xx or a lost answer without doing anything twice. */
function repeatableMethod(method: IHttpRequestMethods): boolean {
	return method === 'GET' || method === 'HEAD' || method === 'PATCH';
}

function isEnvelope(body: unknown): body is { success: boolean; data?: unknown; meta?: PageMeta } {
	return (
		typeof body === 'object' &&
		body !== null &&
		!Array.isArray(body) &&
		typeof (body as { success?: unknown }).success === 'boolean'
	);
}

function parseBody(body: unknown): unknown {
	if (typeof body !== 'string') return body;
	try {
		return JSON.parse(body);
	} catch {
		return body;
	}
}

/** Exponential backoff with jitter, for answers that say nothing about when to come back. */
function backoff(attempt: number): number {
	const base = SERVER_ERROR_BASE_DELAY_MS * 2 ** attempt;
	return base + Math.floor(random() * base * 0.25);
}

/** n8n's HTTP options for a request: full response, statuses handled here, the user's Request Options. */
function httpOptions(
	baseUrl: string,
	request: ApiRequest,
	signal: AbortSignal | undefined,
): IHttpRequestOptions {
	const options: IHttpRequestOptions = {
		method: request.method,
		url: `${baseUrl}${API_PREFIX}${request.path}`,
		qs: request.qs,
		json: true,
		returnFullResponse: true,
		ignoreHttpStatusErrors: true,
		headers: { Accept: 'application/json' },
		timeout: DEFAULT_TIMEOUT_MS,
		// Only the options the user set: an unset timeout must not erase the default.
		...Object.fromEntries(
			Object.entries(request.transport ?? {}).filter(([, value]) => value !== undefined),
		),
	};
	if (request.body !== undefined) options.body = request.body;
	if (signal) options.abortSignal = signal;
	return options;
}

/**
 * The one request pipeline: paces by the rate-limit headers shared per credential, sends through
 * n8n's authenticated HTTP helper, waits out 429s (bounded), repeats 5xx and network failures only
 * for requests safe to repeat, unwraps the envelope and maps every failure to a clear NodeApiError.
 */
export async function apiRequest(ctx: RequestContext, given: ApiRequest): Promise<ApiResponse> {
	const node = ctx.getNode();
	const signal = cancelSignal(ctx);
	if (signal?.aborted) throw cancelledError(node, given, false);
	const { baseUrl, key, credentials } = await connection(ctx, given);
	let request = given;
	// What ends this request's waits: Stop, or the node run withdrawing what it has not sent.
	const waits = withdrawals.get(ctx) ?? signal;
	const stopped = (sent: boolean) =>
		signal?.aborted ? cancelledError(node, request, sent) : withdrawnError(node, request);
	let options: IHttpRequestOptions | undefined;

	const repeatable = given.safeToRepeat ?? repeatableMethod(given.method);
	// 429s since the key last moved (another request of it answered, or others seen to spend the window
	// this probe came for): a key that moves is being paced, however many 429s a crowded window costs;
	// one that does not, stops after a few. The total wait counts from this process's last answer.
	let rateLimited = 0;
	let progress = keyProgress(key);
	let rateLimitWaited = 0;
	let failures = 0;
	// After a 5xx or a lost answer: wait and go again, only while the request is safe to repeat.
	const retryAfterFailure = async (): Promise<boolean> => {
		failures++;
		if (!repeatable || failures > SERVER_ERROR_MAX_RETRIES || waits?.aborted) return false;
		await pause(backoff(failures - 1), waits);
		return !waits?.aborted;
	};

	for (let attempt = 1; ; attempt++) {
		const waitStarted = Date.now();
		waitBegins(ctx, key);
		const slot = await acquireSlot(key, waits);
		waitEnds(ctx, waitStarted, ctx.logger);
		if (!slot) throw stopped(attempt > 1);
		// Stopped between the grant and the send (the request's preparation included): the slot goes
		// back unsent, for the key's other requests, and the item is told this attempt was not sent.
		const giveBackIfStopped = () => {
			if (!waits?.aborted) return;
			cancelSlot(key, slot);
			throw stopped(attempt > 1);
		};
		if (slot.tooLongUntil !== undefined) {
			gaveUpOnRateLimit(ctx);
			throw rateLimitError(node, slot.tooLongUntil, request, attempt - 1);
		}
		giveBackIfStopped();
		if (attempt === 1) {
			try {
				request = { ...given, ...(given.prepare ? await given.prepare() : {}) };
			} catch (error) {
				cancelSlot(key, slot);
				throw new NodeOperationError(node, error as Error);
			}
			giveBackIfStopped();
			options = httpOptions(baseUrl, request, signal);
		}

		let response: IN8nHttpFullResponse;
		try {
			response = (await ctx.helpers.httpRequestWithAuthentication.call(
				ctx,
				CREDENTIAL_TYPE,
				options!,
				// The credential already read (a copy: n8n may add to it while authenticating).
				{
					credentialsDecrypted: {
						id: '',
						name: '',
						type: CREDENTIAL_TYPE,
						data: { ...credentials },
					},
				},
			)) as IN8nHttpFullResponse;
		} catch (error) {
			releaseSlot(key, slot, undefined);
			// Missing credential and the like: already clear, nothing was sent.
			if (error instanceof NodeOperationError) throw new NodeOperationError(node, error);
			if (signal?.aborted) throw cancelledError(node, request, true);
			// n8n wraps transport failures in its own NodeApiError whose cause holds the request
			// (headers included): keep only the error code, never the original object.
			const failure = networkFailure(error);
			// A certificate or a host name that does not exist will not change in a few seconds.
			const lasting = failure.kind === 'tls' || failure.code === 'ENOTFOUND';
			if (!lasting && (await retryAfterFailure())) continue;
			throw networkError(node, failure, baseUrl, request, {
				attempts: attempt,
				notRepeated: !repeatable,
				timeoutMs: options!.timeout,
				timeoutSet: request.transport?.timeout !== undefined,
			});
		}

		const headers = response.headers as Record<string, unknown>;
		const status = response.statusCode;
		releaseSlot(key, slot, headers, currentTime(), status);
		const body = parseBody(response.body);

		if (status === 429) {
			const moved = keyProgress(key);
			if (moved.answered !== progress.answered) {
				rateLimited = 0;
				rateLimitWaited = 0;
			}
			rateLimited++;
			const now = currentTime();
			const until = markExhausted(key, headers, now + backoff(rateLimited - 1), now, slot);
			// Crowded out by the others on the key: this probe's turn has not come, the key still moves.
			if (keyProgress(key).crowdedOut !== moved.crowdedOut) rateLimited = 0;
			progress = keyProgress(key);
			const wait = Math.max(0, until - now);
			if (!repeatable && !refusedBeforeRunning(body)) {
				throw httpError(node, status, body, request, {
					attempts: attempt,
					notRepeated: true,
					resetAt: until,
				});
			}
			if (
				rateLimited > RATE_LIMIT_MAX_RETRIES ||
				rateLimitWaited + wait > RATE_LIMIT_MAX_TOTAL_WAIT_MS
			) {
				gaveUpOnRateLimit(ctx);
				throw rateLimitError(node, until, request, attempt);
			}
			rateLimitWaited += wait;
			retriedAfter429(ctx);
			continue; // acquireSlot waits for the reset
		}

		if (status >= 500) {
			if (await retryAfterFailure()) continue;
			throw httpError(node, status, body, request, { attempts: attempt, notRepeated: !repeatable });
		}

		if (status >= 400) throw httpError(node, status, body, request);

		if (!isEnvelope(body)) {
			// An empty 204 is a valid answer to a delete; anything else is not our API.
			if (status === 204 && (body === undefined || body === '' || body === null)) {
				return { data: undefined };
			}
			throw notEnvelopeError(node, status, body, options!.url, request);
		}
		if (!body.success) throw httpError(node, status, body, request);
		return { data: body.data, meta: body.meta, hasData: 'data' in body, key };
	}
}
