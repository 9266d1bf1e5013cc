import type { INode, JsonObject } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';
import { declaredFailure } from './failure';
import type { NetworkFailure } from './network';
import { tlsProblem } from './network';
import { NodeApiError } from './redact';

/** What a request was about, so an error can name it ("Lead ld_42 was not found"). */
export interface RequestTarget {
	/** Human label of the resource, e.g. "Lead". */
	resource?: string;
	id?: string;
	itemIndex?: number;
}

interface FieldProblem {
	field?: string;
	message: string;
}

function isObject(value: unknown): value is Record<string, unknown> {
	return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const HTML_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" };

/** The readable text of an HTML error page: its first paragraph or heading, else its title. */
function htmlText(html: string): string | undefined {
	const pick = (tag: string) =>
		new RegExp(`<${tag}[^>]*>([\\s\\S]*?)</${tag}>`, 'i').exec(html)?.[1];
	const raw = pick('p') ?? pick('h1') ?? pick('title');
	if (raw === undefined) return undefined;
	const text = raw
		.replace(/<[^>]*>/g, ' ')
		.replace(/&(amp|lt|gt|quot|#39);/g, (_m, name: string) => HTML_ENTITIES[name])
		.replace(/\s+/g, ' ')
		.trim();
	return text || undefined;
}

/** A plain-text body: its first line without a leading status ("422 Unprocessable Entity: ..."). */
function textMessage(text: string): string | undefined {
	const first = text.split(/\r?\n/)[0]?.trim() ?? '';
	const message = first.replace(/^\d{3}(\s+[A-Za-z][A-Za-z -]*)?:\s*/, '').trim();
	return message ? message.slice(0, 300) : undefined;
}

/** "- field: message" lines of a plain-text body. */
function textProblems(text: string): FieldProblem[] {
	const problems: FieldProblem[] = [];
	for (const line of text.split(/\r?\n/)) {
		const match = /^\s*[-*]\s*([^:\s][^:]*):\s*(.+)$/.exec(line);
		if (match) problems.push({ field: match[1].trim(), message: match[2].trim() });
	}
	return problems;
}

function isHtml(text: string): boolean {
	return /^\s*<(!doctype|html|head|body)/i.test(text);
}

/** The server's own words, looked for in this order: error.message, error, message, detail, title, errors[]. */
export function serverMessage(body: unknown): string | undefined {
	if (typeof body === 'string') return isHtml(body) ? htmlText(body) : textMessage(body);
	if (!isObject(body)) return undefined;
	const { error } = body;
	if (isObject(error) && typeof error.message === 'string') return error.message;
	if (typeof error === 'string') return error;
	if (typeof body.message === 'string') return body.message;
	// application/problem+json (RFC 9457)
	if (typeof body.detail === 'string') return body.detail;
	if (typeof body.title === 'string') return body.title;
	const problems = fieldProblems(body);
	if (problems.length) return problems.map(formatProblem).join('; ');
	return undefined;
}

/** A JSON pointer ("#/steps/0/delay_days") as the field path the API uses ("steps[0].delay_days"). */
function pointerField(pointer: string): string {
	return pointer
		.replace(/^#?\//, '')
		.split('/')
		.map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
		.reduce(
			(path, part) => (/^\d+$/.test(part) ? `${path}[${part}]` : path ? `${path}.${part}` : part),
			'',
		);
}

function problemFromEntry(entry: unknown, field?: string): FieldProblem {
	if (typeof entry === 'string') return { field, message: entry };
	if (isObject(entry)) {
		const named = entry.field ?? entry.path ?? entry.param ?? entry.parameter ?? entry.name;
		const pointer = typeof entry.pointer === 'string' ? pointerField(entry.pointer) : undefined;
		const where = named === undefined ? (pointer ?? field) : String(named);
		const message = entry.message ?? entry.msg ?? entry.detail ?? entry.title;
		return {
			field: where || undefined,
			message: typeof message === 'string' ? message : JSON.stringify(entry),
		};
	}
	return { field, message: String(entry) };
}

/**
 * Per-field validation messages, wherever the server put them: a list (`[{field, message}]`,
 * problem+json `[{detail, pointer}]`, strings), a map (`{field: [messages]}`), or "- field: message"
 * lines of a plain-text body.
 */
export function fieldProblems(body: unknown): FieldProblem[] {
	if (typeof body === 'string') return isHtml(body) ? [] : textProblems(body);
	if (!isObject(body)) return [];
	const error = isObject(body.error) ? body.error : undefined;
	const candidates = [error?.details, error?.errors, body.errors, body.details];
	for (const list of candidates) {
		if (Array.isArray(list)) return list.map((entry) => problemFromEntry(entry));
		if (isObject(list)) {
			const problems: FieldProblem[] = [];
			for (const [field, messages] of Object.entries(list)) {
				for (const message of Array.isArray(messages) ? messages : [messages])
					problems.push(problemFromEntry(message, field));
			}
			if (problems.length) return problems;
		}
	}
	return [];
}

function formatProblem(problem: FieldProblem): string {
	return problem.field ? `${problem.field}: ${problem.message}` : problem.message;
}

function about(target: RequestTarget): string {
	if (target.resource && target.id) return `${target.resource} "${target.id}"`;
	if (target.resource) return `The ${target.resource.toLowerCase()}`;
	return 'The requested item';
}

/** Only the parts of a body that are safe and useful to keep on an error (never request headers). */
function errorContext(status: number, body: unknown): JsonObject {
	const context: JsonObject = { httpCode: String(status) };
	if (isObject(body)) context.body = body as JsonObject;
	else if (typeof body === 'string') context.body = body.slice(0, 500);
	return context;
}

/**
 * Every error of this package is built here: the one place its final message and description pass
 * through on their way to the user (the list reader's own errors, in listErrors.ts, too).
 */
export function apiError(
	node: INode,
	context: JsonObject,
	options: { message: string; description?: string } & Omit<
		NonNullable<ConstructorParameters<typeof NodeApiError>[2]>,
		'message' | 'description'
	>,
): NodeApiError {
	return new NodeApiError(node, context, options);
}

/**
 * The execution was cancelled (Stop, or n8n's execution timeout): nothing more is sent. It declares
 * no failure: neither the service nor the configuration failed.
 */
export function cancelledError(node: INode, target: RequestTarget, sent: boolean): NodeApiError {
	return apiError(
		node,
		{ cancelled: true },
		{
			message: 'The execution was cancelled',
			description: sent
				? 'Stopped while this request was under way or waiting to be repeated: it may or may not have been carried out.'
				: 'This request was not sent.',
			itemIndex: target.itemIndex,
		},
	);
}

/**
 * A request withdrawn before it was sent: another item of the node run failed and the node fails
 * with that item's error (see withdrawWaits). Never the error a node run fails with.
 */
export class WithdrawnError extends NodeOperationError {}

export function withdrawnError(node: INode, target: RequestTarget): WithdrawnError {
	return new WithdrawnError(node, 'Not sent: another item failed first', {
		description: 'The node stops at its first failure: requests still waiting were not sent.',
		itemIndex: target.itemIndex,
	});
}

/** Maps an HTTP error answer (or `success: false`) to an error a no-code user can act on. */
export function httpError(
	node: INode,
	status: number,
	body: unknown,
	target: RequestTarget,
	extra: { attempts?: number; notRepeated?: boolean; resetAt?: number } = {},
): NodeApiError {
	const said = serverMessage(body);
	const problems = fieldProblems(body);
	let message: string;
	let description = said;

	if (status === 401 || status === 403) {
		message = `The Outreach Automation API refused the API key (HTTP ${status}): check the API key in the credential`;
	} else if (status === 404 && !isObject(body)) {
		// Not the API's JSON: a website or a proxy at the Base URL answers every path so.
		message = `${about(target)} was not found, and the answer is not the Outreach Automation API's (HTTP 404, not JSON)`;
		description = `${said ? `${said}. ` : ''}Check the Base URL in the credential (the host root, without /api/v1): it may point at a website instead of the API. Otherwise check the ID.`;
	} else if (status === 404) {
		message = `${about(target)} was not found`;
		description = said
			? `${said}. Check the ID, or pick it from the list.`
			: 'Check the ID, or pick it from the list.';
	} else if (status === 400 || status === 422) {
		const details = problems.length ? problems.map(formatProblem).join('; ') : said;
		message = details
			? `The service rejected the request: ${details}`
			: `The service rejected the request (HTTP ${status})`;
		description = said && said !== details ? said : undefined;
	} else if (status === 409) {
		message = said ?? `${about(target)} is already in the requested state`;
		description = 'Nothing was changed.';
	} else if (status >= 500) {
		message = `The Outreach Automation service is unavailable (HTTP ${status})`;
		const tried = extra.attempts && extra.attempts > 1 ? `Tried ${extra.attempts} times. ` : '';
		const notRepeated = extra.notRepeated
			? 'The request was not repeated because it may already have been carried out (it creates or sends something): check before running it again. '
			: '';
		description = `${tried}${notRepeated}${said ?? ''}`.trim() || undefined;
	} else if (status === 429) {
		message =
			'Rate limit of the Outreach Automation API reached (HTTP 429), and the answer does not show whether the request ran';
		description =
			`The request was not repeated because it may already have been carried out (it creates or sends something): check before running it again. ${said ?? ''}`.trim();
	} else if (status >= 200 && status < 300) {
		message = `The Outreach Automation API reported an error: ${said ?? 'no reason given'}`;
		description = problems.length ? problems.map(formatProblem).join('; ') : undefined;
	} else {
		message = said
			? `The Outreach Automation API answered HTTP ${status}: ${said}`
			: `The Outreach Automation API answered HTTP ${status}`;
	}
	if (
		(status === 400 || status === 422) &&
		!(description ?? '').includes(`HTTP ${status}`) &&
		!message.includes(`HTTP ${status}`)
	)
		description = `${description ? `${description} ` : ''}(HTTP ${status})`;

	return apiError(node, errorContext(status, body), {
		message,
		description,
		httpCode: String(status),
		itemIndex: target.itemIndex,
		failure: declaredFailure({
			kind: 'http',
			status,
			envelope: isObject(body) && typeof body.success === 'boolean',
			resetAt: extra.resetAt,
		}),
	});
}

/** The rate limit held out longer than we may wait. */
export function rateLimitError(
	node: INode,
	resetAt: number | undefined,
	target: RequestTarget,
	attempts: number,
): NodeApiError {
	const now = Date.now();
	const when =
		resetAt !== undefined
			? ` It resets at ${new Date(resetAt).toISOString()} (in ${Math.max(1, Math.ceil((resetAt - now) / 1000))} s).`
			: '';
	return apiError(node, { httpCode: '429' } as JsonObject, {
		message: `Rate limit of the Outreach Automation API reached (HTTP 429).${when}`,
		description:
			`Tried ${attempts} time(s). The API allows about 100 requests per minute per API key, shared by every workflow using it. ` +
			'Run the workflow again after the reset, process fewer items per execution, or space them out with the ' +
			"node's Settings > Retry On Fail or Request Options > Batching.",
		httpCode: '429',
		itemIndex: target.itemIndex,
		failure: declaredFailure({ kind: 'rateLimit', resetAt }, now),
	});
}

/** "2 s", "1.5 s", "200 ms": a timeout as the user set it, in milliseconds. */
function duration(ms: number): string {
	return ms < 1000 ? `${ms} ms` : `${Number((ms / 1000).toFixed(1))} s`;
}

function hostOf(baseUrl: string): { host: string; hostname: string } {
	try {
		const url = new URL(baseUrl);
		return { host: url.host, hostname: url.hostname };
	} catch {
		return { host: baseUrl, hostname: baseUrl };
	}
}

export interface NetworkErrorExtra {
	attempts?: number;
	/** The request was not repeated because it may have been carried out (create, send, start, pause). */
	notRepeated?: boolean;
	/** The timeout in force, and whether the user set it under Request Options. */
	timeoutMs?: number;
	timeoutSet?: boolean;
}

/**
 * No answer at all. Each kind says what happened and what to check: a timeout is not a wrong Base
 * URL, and a refused connection never carried anything out.
 */
export function networkError(
	node: INode,
	failure: NetworkFailure,
	baseUrl: string,
	target: RequestTarget,
	extra: NetworkErrorExtra = {},
): NodeApiError {
	const { code } = failure;
	const attempts = extra.attempts ?? 1;
	const tried = attempts === 1 ? 'Tried once.' : `Tried ${attempts} times.`;
	// Refused, unknown host and TLS fail before the request leaves: nothing can have been done.
	const notSent = `The request was not sent. ${tried}`;
	const maybeDone = extra.notRepeated
		? `${tried} The request was not repeated because it may already have been carried out (it creates or sends something): check before running it again.`
		: tried;
	const { host, hostname } = hostOf(baseUrl);
	let message: string;
	let description: string;
	// Codes stay out of messages: n8n swaps a message naming ECONNRESET and the like for a generic one.
	switch (failure.kind) {
		case 'timeout': {
			const ms = extra.timeoutMs;
			const within = ms !== undefined ? ` within ${duration(ms)}` : ' in time';
			message = `The Outreach Automation API did not answer${within}${extra.timeoutSet ? ' (Request Options > Timeout)' : ''}`;
			description =
				`No answer from ${baseUrl} in time (${code}): the service is slow or busy; the Base URL need not be wrong. ${maybeDone} ` +
				(extra.timeoutSet
					? 'Raise Request Options > Timeout, or run it again later.'
					: 'Run it again later.');
			break;
		}
		case 'refused':
			message = `Connection refused at ${host}: the Outreach Automation service is not running there`;
			description = `The connection was refused (${code}). Check the host and port of the Base URL in the credential, and that the service is running. ${notSent}`;
			break;
		case 'unknownHost':
			message = `The host name "${hostname}" of the Base URL could not be found`;
			description =
				code === 'EAI_AGAIN'
					? `The name lookup (DNS) failed for now (${code}): run it again later, and check that n8n can resolve host names. ${notSent}`
					: `No address is known for this name (${code}): check the Base URL in the credential for a typo. ${notSent}`;
			break;
		case 'tls':
			message = `The secure connection (TLS) to ${host} failed: ${tlsProblem(code) ?? 'the TLS handshake failed'}`;
			description =
				code === 'EPROTO' || code === 'ERR_SSL_WRONG_VERSION_NUMBER'
					? `(${code}) If the service does not use HTTPS, start the Base URL with http://. ${notSent}`
					: `(${code}) n8n does not trust the server's certificate: give the service a certificate from a trusted authority, or for a test server only turn on Request Options > Ignore SSL Issues. ${notSent}`;
			break;
		case 'reset':
			message = 'The connection to the Outreach Automation API was closed before an answer arrived';
			description = `The connection to ${baseUrl} was reset (${code}): the service, a proxy or a firewall dropped it. ${maybeDone}`;
			break;
		default:
			message = `Could not reach the Outreach Automation API at ${baseUrl}`;
			description = `No answer (${code}). Check the Base URL in the credential and that the service is reachable from n8n. ${maybeDone}`;
	}
	return apiError(node, { networkError: code, kind: failure.kind } as JsonObject, {
		message,
		description,
		httpCode: 'none',
		itemIndex: target.itemIndex,
		failure: declaredFailure({ kind: 'network', failure }),
	});
}

/** A 2xx answer that is not the `{success, data, meta}` envelope: usually a wrong Base URL. */
export function notEnvelopeError(
	node: INode,
	status: number,
	body: unknown,
	url: string,
	target: RequestTarget,
): NodeApiError {
	const excerpt = (typeof body === 'string' ? body : (JSON.stringify(body) ?? String(body))).slice(
		0,
		200,
	);
	return apiError(node, { httpCode: String(status) } as JsonObject, {
		message: 'The answer is not an Outreach Automation API response',
		description: `${url} answered HTTP ${status} with: ${excerpt}. Check the Base URL in the credential (the host root, without /api/v1).`,
		httpCode: String(status),
		itemIndex: target.itemIndex,
		failure: declaredFailure({ kind: 'notTheApi' }),
	});
}
