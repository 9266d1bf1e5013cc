import { createHash } from 'crypto';

import { API_PREFIX } from './constants';

const TRAILING_SLASHES = /\/+$/;
const API_SUFFIX = /\/api\/v1$/i;

/**
 * A visible character: printable ASCII from "!" to "~", or any character beyond ASCII. Spaces,
 * control characters and DEL are not visible.
 */
const VISIBLE = String.raw`[!-~\u0080-\uffff]`;
/** A visible character of the host part: not the end of the host (/ ? #), userinfo (@) or a backslash. */
const HOST_CHARACTER = String.raw`(?![/?#@\\])${VISIBLE}`;
/** A visible character of the path: not a query, a fragment or a backslash. */
const PATH_CHARACTER = String.raw`(?![?#\\])${VISIBLE}`;

/**
 * A usable host root: http(s), a host without user name or password, then an optional path; no
 * query, fragment, backslash, space or control character (each would change where requests go).
 */
const BASE_URL_SHAPE = new RegExp(
	String.raw`^https?://(?:${HOST_CHARACTER})+(?:/(?:${PATH_CHARACTER})*)?$`,
	'i',
);

/** Printable ASCII without spaces: what can be sent as a Bearer token unchanged. */
const API_KEY_SHAPE = /^[\x21-\x7e]+$/;

/**
 * The host root of the service from the credential's Base URL: surrounding spaces, trailing
 * slashes and a pasted `/api/v1` suffix removed. The credential test does the same steps in an
 * n8n expression (CREDENTIAL_TEST_BASE_URL), so both reach the same address.
 */
export function normalizeBaseUrl(raw: unknown): string {
	const value = typeof raw === 'string' ? raw : '';
	return value.trim().replace(TRAILING_SLASHES, '').replace(API_SUFFIX, '');
}

/** The normalised Base URL when it is a usable http(s) host root; undefined otherwise. */
export function checkedBaseUrl(raw: unknown): string | undefined {
	const value = normalizeBaseUrl(raw);
	return BASE_URL_SHAPE.test(value) ? value : undefined;
}

export interface CredentialProblem {
	message: string;
	description: string;
}

const IN_CREDENTIAL = 'in the Outreach Automation API credential';
const HOST_ROOT =
	'Use the host root of the service, e.g. https://api.example.com (the node adds /api/v1).';

/** What is wrong with the credential, naming the field; never quoting the values (they may hold secrets). */
export function credentialProblem(
	baseUrl: unknown,
	apiKey: unknown,
): CredentialProblem | undefined {
	const url = normalizeBaseUrl(baseUrl);
	if (!BASE_URL_SHAPE.test(url)) {
		const problem = (message: string) => ({
			message: `The Base URL ${IN_CREDENTIAL} ${message}`,
			description: HOST_ROOT,
		});
		if (!/^https?:\/\//i.test(url)) return problem('must start with http:// or https://');
		const authority = url.replace(/^https?:\/\//i, '').split(/[/?#]/)[0];
		if (authority.includes('@')) {
			return {
				message: `The Base URL ${IN_CREDENTIAL} must not contain a user name or password`,
				description: `Remove the "name:password@" part: the service is authenticated with the API Key field only. ${HOST_ROOT}`,
			};
		}
		if (/[?#]/.test(url)) return problem('must not contain a query (?…) or a fragment (#…)');
		return problem(
			'must be a plain web address, without spaces, backslashes or control characters',
		);
	}
	const key = typeof apiKey === 'string' ? apiKey.trim() : '';
	if (!key) {
		return {
			message: `The API Key ${IN_CREDENTIAL} is empty`,
			description: 'Paste the API key of your Outreach Automation account.',
		};
	}
	if (!API_KEY_SHAPE.test(key)) {
		return {
			message: `The API Key ${IN_CREDENTIAL} contains spaces, line breaks or invisible characters`,
			description:
				'Copy the key again from your Outreach Automation account; spaces and line breaks around it are removed, those inside it are not.',
		};
	}
	return undefined;
}

/** A notice of the credential dialog: its text, and when it shows (pattern strings n8n's editor tests the Base URL with). */
export interface BaseUrlNotice {
	name: string;
	text: string;
	/** Shown when the Base URL matches this pattern... */
	when: string;
	/** ...unless it matches one of these. */
	unless?: string[];
}

/**
 * What credentialProblem refuses, said in the dialog while the user types (n8n shows the
 * credential test's own failure only as "Invalid URL"). Expressions are left alone.
 */
export const BASE_URL_NOTICES: BaseUrlNotice[] = [
	{
		name: 'baseUrlSchemeNotice',
		text: `The Base URL must start with http:// or https://. ${HOST_ROOT}`,
		when: '\\S',
		// Typing "https://" letter by letter is not an error yet.
		unless: ['^\\s*[hH][tT][tT][pP][sS]?://', '^\\s*[hH]([tT]([tT]([pP]([sS]?:?/?)?)?)?)?\\s*$'],
	},
	{
		name: 'baseUrlUserinfoNotice',
		text: `The Base URL must not contain a user name or password: remove the "name:password@" part (the service is authenticated with the API Key field only). ${HOST_ROOT}`,
		when: '^\\s*[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*@',
	},
	{
		name: 'baseUrlQueryNotice',
		text: `The Base URL must not contain a query (?…) or a fragment (#…). ${HOST_ROOT}`,
		when: '[?#]',
	},
	{
		name: 'baseUrlSpacesNotice',
		text: `The Base URL must be a plain web address, without spaces, backslashes or control characters inside. ${HOST_ROOT}`,
		when: '\\S[\\s\\x00-\\x1f\\x7f]+\\S|\\\\',
	},
];

const NORMALIZED = `String($credentials.baseUrl).trim().replace(${TRAILING_SLASHES}, "").replace(${API_SUFFIX}, "")`;

/**
 * normalizeBaseUrl as an expression, for the credential's declarative test request (which cannot
 * call code), with the API prefix appended. A Base URL the nodes refuse becomes a relative address
 * that is never sent (n8n's test reports an invalid URL), so userinfo never turns into Basic auth.
 */
export const CREDENTIAL_TEST_BASE_URL = `={{ ${BASE_URL_SHAPE}.test(${NORMALIZED}) ? ${NORMALIZED} : "base-url-refused" }}${API_PREFIX}`;

const TRIMMED_KEY = 'String($credentials.apiKey ?? "").trim()';

/**
 * The Authorization header, for the nodes and the credential test: the key trimmed; a key with
 * inner spaces or invisible characters is not sent at all, so the service answers 401 and the
 * credential test shows its 401 message (the nodes refuse such a key by name before any request).
 */
export const AUTHORIZATION_HEADER = `={{ "Bearer " + (${API_KEY_SHAPE}.test(${TRIMMED_KEY}) ? ${TRIMMED_KEY} : "") }}`;

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/** One server, one spelling: scheme and host lower-cased, default ports dropped, loopback one name. */
export function normalizeOrigin(baseUrl: string): string {
	const match = /^([a-z][a-z0-9+.-]*):\/\/([^/?#]*)(.*)$/i.exec(baseUrl.trim());
	if (!match) return baseUrl;
	const scheme = match[1].toLowerCase();
	let host = match[2].replace(/^[^@]*@/, '').toLowerCase();
	host = host.replace(scheme === 'https' ? /:443$/ : /:80$/, '');
	const hostOnly = host.replace(/:\d+$/, '');
	if (LOOPBACK.has(hostOnly)) host = `loopback${host.slice(hostOnly.length)}`;
	return `${scheme}://${host}${match[3].replace(/\/+$/, '')}`;
}

/**
 * What a credential's rate-limit window (and a trigger's account) is known by: a hash of origin and key,
 * so the key itself is never kept.
 */
export function windowKey(baseUrl: string, apiKey: string): string {
	return createHash('sha256')
		.update(`${normalizeOrigin(baseUrl)}\u0000${apiKey}`)
		.digest('hex');
}
