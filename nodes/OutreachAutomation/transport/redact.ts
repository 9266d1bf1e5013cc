import type { INode } from 'n8n-workflow';
import { NodeApiError as N8nNodeApiError, NodeOperationError } from 'n8n-workflow';

/**
 * The one redaction: API keys (whole, and any part of 8 characters or more), Authorization header
 * values and URL userinfo are replaced before anything the nodes produce can show them. Servers
 * echo credentials in debug messages, and n8n stores errors and output where many people read them.
 */

export const REDACTED = '[redacted]';

/** Parts of a key shorter than this are too common to hide without mangling ordinary text. */
const MIN_PART = 8;

/** Keys seen by this process, newest last; errors are built far from where credentials are read. */
const known = new Set<string>();
const MAX_KNOWN = 200;

const AUTH_HEADER =
	/(authorization["']?\s*[:=]\s*["']?(?:(?:bearer|basic|token)\s+)?)(?!\[redacted\]|(?:bearer|basic|token)\s)[^\s"',;]+/gi;
// Case-sensitive, as headers are written: "a basic setup" must stay readable.
const BEARER = /\b(Bearer|Basic) +[A-Za-z0-9._~+/=-]{8,}/g;
const USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@]+@/gi;

/** Notes a credential's key so every later error and log line of this process hides it. */
export function rememberSecret(raw: unknown): void {
	if (typeof raw !== 'string') return;
	// Trimmed: the key is sent trimmed, and surrounding spaces would swallow the text around it.
	const key = raw.trim();
	if (!key || known.has(key)) return;
	known.add(key);
	const encoded = encodeURIComponent(key);
	if (encoded !== key) known.add(encoded);
	while (known.size > MAX_KNOWN) known.delete(known.values().next().value as string);
}

function escape(text: string): string {
	return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

let cached: { size: number; last: string | undefined; pattern: RegExp | undefined } = {
	size: -1,
	last: undefined,
	pattern: undefined,
};

/** One pattern for every known key: the whole key, and every 8-character window of it. */
function keyPattern(): RegExp | undefined {
	const keys = [...known];
	const last = keys[keys.length - 1];
	if (cached.size === keys.length && cached.last === last) return cached.pattern;
	const parts = new Set<string>();
	for (const key of keys) {
		parts.add(key);
		for (let i = 0; i + MIN_PART <= key.length; i++) parts.add(key.slice(i, i + MIN_PART));
	}
	const sorted = [...parts].sort((a, b) => b.length - a.length).map(escape);
	const pattern = sorted.length ? new RegExp(sorted.join('|'), 'g') : undefined;
	cached = { size: keys.length, last, pattern };
	return pattern;
}

/** Marks every occurrence of a key part, then replaces each marked run once (overlaps included). */
function hideKeys(text: string, pattern: RegExp): string {
	const marked = new Uint8Array(text.length);
	let any = false;
	for (let i = 0; i < text.length; i++) {
		pattern.lastIndex = i;
		const match = pattern.exec(text);
		if (!match) break;
		any = true;
		marked.fill(1, match.index, match.index + match[0].length);
		i = match.index;
	}
	if (!any) return text;
	let out = '';
	for (let i = 0; i < text.length; i++) {
		if (!marked[i]) out += text[i];
		else if (i === 0 || !marked[i - 1]) out += REDACTED;
	}
	return out;
}

/** A string with every known key, Authorization value and URL userinfo replaced. */
export function redactText(text: string): string {
	let out = hideKnownKeys(text);
	out = out.replace(AUTH_HEADER, `$1${REDACTED}`);
	out = out.replace(BEARER, `$1 ${REDACTED}`);
	return out.replace(USERINFO, `$1${REDACTED}@`);
}

/** A string with every known key replaced (nothing else: for the service's data). */
export function hideKnownKeys(text: string): string {
	const pattern = keyPattern();
	return pattern ? hideKeys(text, pattern) : text;
}

/**
 * A copy of a JSON-like value with every string (keys included) redacted. `dataOnly`, for output
 * items: only the known keys, so text such as "Basic plan" in the service's data stays intact.
 */
export function redactValue<T>(
	value: T,
	dataOnly = false,
	seen = new WeakMap<object, unknown>(),
): T {
	const redact = dataOnly ? hideKnownKeys : redactText;
	if (typeof value === 'string') return redact(value) as T;
	if (typeof value !== 'object' || value === null) return value;
	if (seen.has(value)) return seen.get(value) as T;
	if (Array.isArray(value)) {
		const copy: unknown[] = [];
		seen.set(value, copy);
		for (const entry of value) copy.push(redactValue(entry, dataOnly, seen));
		return copy as T;
	}
	const prototype = Object.getPrototypeOf(value) as unknown;
	if (prototype !== Object.prototype && prototype !== null) return value;
	const copy: Record<string, unknown> = {};
	seen.set(value, copy);
	for (const [key, entry] of Object.entries(value)) {
		// defineProperty: a key named __proto__ stays a plain key of the copy.
		Object.defineProperty(copy, redact(key), {
			value: redactValue(entry, dataOnly, seen),
			enumerable: true,
			writable: true,
			configurable: true,
		});
	}
	return copy as T;
}

/**
 * Redacts an error in place (message, stack, description, cause, context and every other own
 * property) and returns it, so a throw site needs only to wrap what it throws.
 */
export function redactError<E>(error: E): E {
	if (typeof error !== 'object' || error === null) return error;
	const seen = new WeakSet<object>();
	const visit = (target: object) => {
		if (seen.has(target)) return;
		seen.add(target);
		for (const name of Object.getOwnPropertyNames(target)) {
			const descriptor = Object.getOwnPropertyDescriptor(target, name);
			if (!descriptor || !('value' in descriptor) || !descriptor.writable) continue;
			const value = descriptor.value as unknown;
			if (typeof value === 'string') {
				(target as Record<string, unknown>)[name] = redactText(value);
			} else if (value instanceof Error) {
				visit(value);
			} else if (typeof value === 'object' && value !== null) {
				// Plain data only: class instances (sockets, agents) are neither copied nor walked.
				const prototype = Object.getPrototypeOf(value) as unknown;
				if (Array.isArray(value) || prototype === Object.prototype || prototype === null) {
					(target as Record<string, unknown>)[name] = redactValue(value);
				}
			}
		}
	};
	visit(error);
	return error;
}

/**
 * n8n's NodeApiError, redacted as it is built: the error builders use it in its place, so no path
 * can throw an unredacted one. Same name, so n8n treats it as its own.
 */
export class NodeApiError extends N8nNodeApiError {
	constructor(...args: ConstructorParameters<typeof N8nNodeApiError>) {
		super(...args);
		redactError(this);
	}
}

/** For the nodes' outermost catch: the error as n8n's own kind, redacted. */
export function redactedFailure(node: INode, error: unknown): N8nNodeApiError | NodeOperationError {
	if (error instanceof N8nNodeApiError || error instanceof NodeOperationError)
		return redactError(error);
	return redactError(new NodeOperationError(node, error as Error));
}
