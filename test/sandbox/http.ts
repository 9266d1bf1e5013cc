/** HTTP plumbing shared by the API and control handlers: the envelope, errors, body reading, zod issues. */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { z } from 'zod';

export const BODY_LIMIT = 1024 * 1024;

export interface FieldError {
	field: string;
	message: string;
}

/** What a handler answers; the server turns it into an HTTP response. */
export interface Reply {
	/** 0 means: drop the connection without answering. */
	status: number;
	body: unknown;
	headers?: OutgoingHttpHeaders;
	/** Sent verbatim instead of JSON.stringify(body): for deliberately malformed bodies. */
	raw?: string;
	/** Set on error answers, so the server can render them in the configured error style. */
	error?: ErrorInfo;
	/** Runs once the handler's work is done (list churn), whatever answer the client then gets. */
	after?: () => void;
}

/** What an error says, before it is shaped into a body. */
export interface ErrorInfo {
	status: number;
	message: string;
	details?: FieldError[];
}

const CODES: Record<number, string> = {
	400: 'bad_request',
	401: 'unauthorized',
	403: 'forbidden',
	404: 'not_found',
	405: 'method_not_allowed',
	409: 'conflict',
	413: 'payload_too_large',
	415: 'unsupported_media_type',
	422: 'validation_error',
	429: 'rate_limited',
	500: 'internal_error',
	502: 'unavailable',
	503: 'unavailable',
	504: 'unavailable',
};
export const codeFor = (status: number) =>
	CODES[status] ?? (status >= 500 ? 'internal_error' : 'error');

/** An error a handler throws to answer with the error envelope. */
export class ApiError extends Error {
	constructor(
		readonly status: number,
		message: string,
		readonly details?: FieldError[],
		readonly headers?: OutgoingHttpHeaders,
	) {
		super(message);
	}
}

export const notFound = (what: string, id: string) => new ApiError(404, `${what} ${id} not found`);

export function invalid(details: FieldError[], status = 422): ApiError {
	const summary = details.map((d) => `${d.field}: ${d.message}`).join('; ');
	return new ApiError(
		status,
		`${status === 400 ? 'Invalid query' : 'Validation failed'}: ${summary}`,
		details,
	);
}

export function errorBody(status: number, message: string, details?: FieldError[]) {
	return {
		success: false,
		error: { code: codeFor(status), message, ...(details ? { details } : {}) },
	};
}

export const ok = (data: unknown, status = 200): Reply => ({
	status,
	body: { success: true, data },
});

/** An error answer in the default envelope; `error` keeps what it says for the other error styles. */
export function failure(
	status: number,
	message: string,
	details?: FieldError[],
	headers?: OutgoingHttpHeaders,
): Reply {
	return {
		status,
		body: errorBody(status, message, details),
		headers,
		error: { status, message, details },
	};
}

export function errorReply(error: unknown): Reply {
	if (error instanceof ApiError)
		return failure(error.status, error.message, error.details, error.headers);
	// A bug in the sandbox itself: say so loudly rather than pass it off as an injected fault.
	console.error('[sandbox] unexpected error', error);
	return {
		status: 500,
		body: errorBody(500, `Sandbox bug: ${(error as Error)?.message ?? error}`),
	};
}

// ---------- zod issues -> [{field, message}] ----------

/** 'steps[1].delay_days'; issues about the whole body are reported on the field 'body'. */
export function fieldName(path: (string | number)[]): string {
	const name = path
		.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`))
		.join('');
	return name || 'body';
}

/** zod's stock wording ("Expected string, received number") becomes the contract's ("must be a string"). */
function wording(issue: z.ZodIssue): string {
	const isStock =
		issue.message === z.defaultErrorMap(issue, { defaultError: '', data: undefined }).message;
	if (!isStock) return issue.message;
	switch (issue.code) {
		case 'invalid_type':
			if (issue.received === 'undefined') return 'is required';
			return `must be ${/^[aeiou]/.test(issue.expected) ? 'an' : 'a'} ${issue.expected}`;
		case 'invalid_enum_value':
			return `must be one of ${issue.options.join(', ')}`;
		case 'invalid_literal':
			return `must be ${JSON.stringify(issue.expected)}`;
		default:
			return issue.message;
	}
}

export function toFieldErrors(issues: z.ZodIssue[], unknownKey = 'unknown field'): FieldError[] {
	return issues.flatMap((issue) =>
		issue.code === 'unrecognized_keys'
			? issue.keys.map((key) => ({ field: fieldName([...issue.path, key]), message: unknownKey }))
			: [{ field: fieldName(issue.path), message: wording(issue) }],
	);
}

/** Validates a JSON body: 422 with per-field details when it does not fit. */
export function parseBody<S extends z.ZodTypeAny>(schema: S, body: unknown): z.output<S> {
	const result = schema.safeParse(body);
	if (!result.success) throw invalid(toFieldErrors(result.error.issues));
	return result.data;
}

/** Validates a query string: 400, since a malformed query is a malformed request rather than bad data. */
export function parseQuery<S extends z.ZodTypeAny>(
	schema: S,
	query: Record<string, string | string[]>,
): z.output<S> {
	const result = schema.safeParse(query);
	if (!result.success)
		throw invalid(toFieldErrors(result.error.issues, 'unknown query parameter'), 400);
	return result.data;
}

// ---------- raw HTTP ----------

export function queryObject(params: URLSearchParams): Record<string, string | string[]> {
	const query: Record<string, string | string[]> = {};
	for (const [key, value] of params) {
		const previous = query[key];
		query[key] = previous === undefined ? value : [previous, value].flat();
	}
	return query;
}

export interface RawBody {
	text: string;
	tooLarge: boolean;
}

/** Reads the whole body; past the limit it keeps draining (so the answer can still be sent) but drops the bytes. */
export function readBody(req: IncomingMessage, limit = BODY_LIMIT): Promise<RawBody> {
	return new Promise((resolve, reject) => {
		const chunks: Buffer[] = [];
		let size = 0;
		req.on('data', (chunk: Buffer) => {
			size += chunk.length;
			if (size <= limit) chunks.push(chunk);
		});
		req.on('end', () =>
			resolve({ text: Buffer.concat(chunks).toString('utf8'), tooLarge: size > limit }),
		);
		req.on('error', reject);
	});
}

/** Parses a request body: undefined when empty; ApiError 400/413/415 when it cannot be JSON. */
export function parseJsonBody(raw: RawBody, contentType: string | undefined): unknown {
	if (raw.tooLarge) throw new ApiError(413, `Request body larger than ${BODY_LIMIT} bytes`);
	if (raw.text.trim() === '') return undefined;
	if (contentType && !/\bjson\b/i.test(contentType)) {
		throw new ApiError(
			415,
			`Content-Type must be application/json, got ${contentType.split(';')[0]}`,
		);
	}
	try {
		return JSON.parse(raw.text);
	} catch (error) {
		throw new ApiError(400, `Invalid JSON body: ${(error as Error).message}`);
	}
}

export function tryParseJson(text: string): unknown {
	try {
		return text.trim() === '' ? null : JSON.parse(text);
	} catch {
		return null;
	}
}

export function sendJson(
	res: ServerResponse,
	status: number,
	body: unknown,
	headers: OutgoingHttpHeaders = {},
): void {
	if (res.destroyed || res.headersSent) return;
	sendRaw(res, status, JSON.stringify(body), headers);
}

export function sendRaw(
	res: ServerResponse,
	status: number,
	text: string,
	headers: OutgoingHttpHeaders = {},
): void {
	res.writeHead(status, {
		'Content-Type': 'application/json; charset=utf-8',
		'Content-Length': Buffer.byteLength(text),
		...headers,
	});
	res.end(text);
}
