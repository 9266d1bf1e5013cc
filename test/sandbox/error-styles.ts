/**
 * Error bodies in the shapes real servers use. The spec shows no error shape, so a client must read them all;
 * echoSecrets plays a server whose debug mode repeats the caller's credentials in its errors.
 */
import { STATUS_CODES } from 'node:http';

import { codeFor, errorBody, type ErrorInfo, type FieldError, type Reply } from './http';
import type { ErrorStyle, SandboxConfig } from './schemas';

/** What the request presented, for echoSecrets. */
export interface Presented {
	authorization?: string;
	key?: string;
}

/** Styles that need an HTTP error status: on a 200 carrying success: false they fall back to the envelope. */
const HTTP_ONLY: readonly ErrorStyle[] = ['problem-json', 'text', 'html'];

const escapeHtml = (s: string) =>
	s.replace(
		/[&<>"']/g,
		(c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
	);

/** 'steps[1].delay_days' -> '#/steps/1/delay_days' (a JSON pointer into the request body, as RFC 9457 shows). */
const pointer = (field: string) =>
	`#/${
		field === 'body'
			? ''
			: field
					.replace(/\[(\d+)\]/g, '.$1')
					.split('.')
					.join('/')
	}`;

function groupByField(details: FieldError[]): Record<string, string[]> {
	const errors: Record<string, string[]> = {};
	for (const d of details) (errors[d.field] ??= []).push(d.message);
	return errors;
}

/** Re-shapes an error reply as config.errorStyle says; other replies pass unchanged. */
export function styleError(
	reply: Reply,
	config: Pick<SandboxConfig, 'errorStyle' | 'echoSecrets'>,
	presented: Presented,
): Reply {
	const info: ErrorInfo | undefined = reply.error;
	if (!info || (config.errorStyle === 'envelope' && !config.echoSecrets)) return reply;
	const style: ErrorStyle =
		reply.status < 400 && HTTP_ONLY.includes(config.errorStyle) ? 'envelope' : config.errorStyle;
	const title = STATUS_CODES[info.status] ?? 'Error';
	const echo = config.echoSecrets
		? ` [debug: Authorization: ${presented.authorization ?? '(none)'}; api_key=${presented.key ?? '(none)'}]`
		: '';
	const message = info.message + echo;
	const debug = config.echoSecrets
		? { debug: { authorization: presented.authorization ?? null, api_key: presented.key ?? null } }
		: {};
	const details = info.details ?? [];
	const json = (body: unknown, contentType = 'application/json; charset=utf-8'): Reply => ({
		...reply,
		body,
		raw: JSON.stringify(body),
		headers: { ...reply.headers, 'Content-Type': contentType },
	});
	const text = (raw: string, contentType: string): Reply => ({
		...reply,
		body: null,
		raw,
		headers: { ...reply.headers, 'Content-Type': contentType },
	});

	switch (style) {
		case 'envelope':
			return json({ ...errorBody(info.status, message, info.details), ...debug });
		case 'message-errors-object':
			return json({
				success: false,
				message,
				...(details.length > 0 ? { errors: groupByField(details) } : {}),
				...debug,
			});
		case 'errors-array':
			return json({
				success: false,
				errors:
					details.length > 0
						? details.map(({ field, message: m }) => ({ field, message: m + echo }))
						: [{ message }],
				...debug,
			});
		case 'error-string':
			return json({ success: false, error: message, ...debug });
		case 'problem-json': {
			// Query problems name the parameter, body problems point into the body (RFC 9457's own examples).
			const errors = details.map((d) =>
				info.status === 400
					? { detail: d.message, parameter: d.field }
					: { detail: d.message, pointer: pointer(d.field) },
			);
			return json(
				{
					type: 'about:blank',
					title,
					status: info.status,
					detail: message,
					code: codeFor(info.status),
					...(errors.length > 0 ? { errors } : {}),
					...debug,
				},
				'application/problem+json; charset=utf-8',
			);
		}
		case 'text': {
			const lines = [
				`${info.status} ${title}: ${message}`,
				...details.map((d) => `- ${d.field}: ${d.message}`),
			];
			return text(`${lines.join('\n')}\n`, 'text/plain; charset=utf-8');
		}
		case 'html': {
			const items = details
				.map((d) => `<li>${escapeHtml(`${d.field}: ${d.message}`)}</li>`)
				.join('');
			const heading = `${info.status} ${escapeHtml(title)}`;
			return text(
				`<html>\r\n<head><title>${heading}</title></head>\r\n<body>\r\n<center><h1>${heading}</h1></center>\r\n` +
					`<p>${escapeHtml(message)}</p>${items ? `<ul>${items}</ul>` : ''}\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n`,
				'text/html',
			);
		}
	}
}
