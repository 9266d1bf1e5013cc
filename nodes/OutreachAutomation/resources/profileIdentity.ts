/**
 * Profile identity: the one rule that decides whether two profile addresses name the same person. Create
 * or Update matches leads by it, so a rule that is too loose merges two people and one that is too strict
 * creates a lead twice. Where in doubt it keeps people apart or refuses; docs/re-runs.md is the users'
 * table of it, and its tests are a corpus of the spellings real data carries.
 */

import { pastedAddress, withoutInvisible } from './pastedText';

/** What the rule makes of one address: the person's key, or why it names no one. */
export type Identity =
	| {
			key: string;
			/**
			 * What a search term promises: every usual spelling of this profile, as a lead stores it,
			 * contains it (case aside), so a server's substring search for it finds every such lead (and
			 * maybe more, which the key then tells apart). Undefined where stored spellings may differ in
			 * more than case: Unicode handles and other sites' non-ASCII addresses (stored percent-encoded,
			 * decomposed or as punycode), and any address the URL parser rewrote. Not usual: a spelling
			 * that percent-encodes plain letters or digits, or has invisible characters inside.
			 */
			searchTerm?: string;
	  }
	| { refused: string };

const SCHEME = /^([a-z][a-z0-9+.-]*):/i;
const ASCII = /^[\x21-\x7e]+$/;
/** A host written without a scheme must look like one: "name.tld", so "n/a" or "-" is no address. */
const BARE_HOST = /^[^\s/?#:.@]+(?:\.[^\s/?#:.@]+)*\.[a-z]{2,}(?::\d+)?(?:[/?#]|$)/i;
/**
 * LinkedIn's member ids (`/in/ACoAA...`, 39 characters of base64url): case matters in them, unlike in
 * chosen handles, which may begin with the same letters ("ACoolEngineer").
 */
const MEMBER_ID = /^ACoAA[A-Za-z0-9_-]{34}$/;
/** A handle a search can find in every stored spelling, upper or lower case. */
const PLAIN_HANDLE = /^[a-z0-9_-]+$/;
/** A handle names someone only with a letter or a digit in it ("-" or "_" alone names no one). */
const NAMES_SOMEONE = /[\p{L}\p{N}]/u;
/**
 * Spaces and punctuation LinkedIn never puts in a handle: a typo ("ada%lovelace"), or text run together
 * with the address ("adahttps://…"), not a person's handle.
 */
const NOT_IN_HANDLES = /[\s!"#$%&'()*+,:;<=>?@[\\\]^`{|}~]/;
/** Handles LinkedIn itself uses that name no one in particular. */
const PLACEHOLDERS: Record<string, string> = {
	unavailable:
		'is the page LinkedIn shows for a profile that is not available (/in/unavailable): it names no one',
	me: 'is the address of whoever opens it (/in/me): it names no one',
};
/** Path prefixes under which LinkedIn serves the same pages: LinkedIn Lite, and links in its e-mails. */
const SURFACES = new Set(['mwlite', 'comm']);
/** LinkedIn's sign-in pages, which carry the page they lead to after signing in. */
const SIGN_IN = new Set(['authwall', 'uas', 'login', 'signup', 'checkpoint']);
const REDIRECT_PARAMETERS = ['sessionRedirect', 'session_redirect'];
/** What every wrapper's address holds (in any letter case). */
const WRAPPER_HINT = /\/comm\/|session_?redirect=/i;

const refuse = (reason: string): Identity => ({ refused: reason });

function decode(segment: string): string {
	try {
		return decodeURIComponent(segment);
	} catch {
		// A stray "%": compared as written.
		return segment;
	}
}

function isLinkedIn(host: string): boolean {
	return host === 'linkedin.com' || host.endsWith('.linkedin.com');
}

/**
 * The person a LinkedIn address names. Only the path decides: scheme, host (www., a country, m.),
 * query (tracking) and fragment name the same page everywhere on the site.
 */
function linkedInIdentity(url: URL): Identity {
	const segments = url.pathname
		.split('/')
		.filter(Boolean)
		.map((segment) => withoutInvisible(decode(segment).normalize('NFC')));
	while (SURFACES.has(segments[0]?.toLowerCase())) segments.shift();
	const [section = '', ...rest] = segments;
	switch (section.toLowerCase()) {
		case 'in': {
			// Anything after the handle is a sub-page (/details/..., /recent-activity/...) or a locale (/de).
			const handle = (rest[0] ?? '').trim();
			if (!handle) return refuse('has no profile handle after /in/: it names no one');
			if (!NAMES_SOMEONE.test(handle))
				return refuse(`has a handle with no letter or digit ("${handle}"): it names no one`);
			if (NOT_IN_HANDLES.test(handle))
				return refuse(`has a handle with characters no LinkedIn handle has ("${handle}")`);
			if (MEMBER_ID.test(handle)) return { key: `linkedin:in/${handle}` };
			const folded = handle.toLowerCase();
			if (Object.hasOwn(PLACEHOLDERS, folded)) return refuse(PLACEHOLDERS[folded]);
			return {
				key: `linkedin:in/${folded}`,
				searchTerm: PLAIN_HANDLE.test(folded) ? folded : undefined,
			};
		}
		case 'pub': {
			// The old public address: /pub/<name>/<a>/<b>/<c>, all four parts; /pub/dir/... is a search.
			const parts = rest.slice(0, 4).map((part) => part.trim().toLowerCase());
			if (parts[0] === 'dir') return refuse('is a directory search, not a profile');
			if (parts.length < 4 || parts.some((part) => !NAMES_SOMEONE.test(part)))
				return refuse('is an incomplete /pub/ address: it needs /pub/<name>/<a>/<b>/<c>');
			const path = `pub/${parts.join('/')}`;
			return {
				key: `linkedin:${path}`,
				searchTerm: /^[a-z0-9/_-]+$/.test(path) ? path : undefined,
			};
		}
		case 'profile': {
			// /profile/view?id=<id>: the id names the member, and case matters in it.
			const id = url.searchParams.get('id')?.trim();
			if ((rest[0] ?? '').toLowerCase() !== 'view' || !id)
				return refuse('is a /profile/ address without a member id (?id=)');
			return {
				key: `linkedin:id/${id}`,
				searchTerm: /^[A-Za-z0-9_-]+$/.test(id) ? `id=${id}` : undefined,
			};
		}
		case 'sales': {
			// Sales Navigator: /sales/lead/<id>,<search>,<token> and /sales/people/<id>,...
			const kind = (rest[0] ?? '').toLowerCase();
			const id = (rest[1] ?? '').split(',')[0].trim();
			if ((kind !== 'lead' && kind !== 'people') || !id)
				return refuse('is a Sales Navigator page, not a lead');
			return { key: `linkedin:sales/${id}` };
		}
		case '':
			return refuse('is the LinkedIn site itself: it names no one');
		default:
			return refuse(`is a LinkedIn page (/${section}/...), not a person's profile`);
	}
}

/**
 * Another site's address: the same person only when the same address, scheme, host letter case and a
 * trailing slash aside. A site's root names the site, not a person, whatever query or fragment follows.
 * `text` is the address as written, for the search term's promise.
 */
function otherSiteIdentity(url: URL, text: string): Identity {
	const path = url.pathname.replace(/\/+$/, '');
	if (!path) return refuse('is the address of a site, not of a person');
	const host = url.hostname.replace(/\.$/, '');
	const key = `url:${host}${url.port ? `:${url.port}` : ''}${path}${url.search}${url.hash}`;
	const term = `${host}${path}`;
	// Only a term the address holds as written: the parser's punycode, percent-escapes or resolved dot
	// segments are not in the text a lead stores.
	const asWritten = ASCII.test(text) && text.toLowerCase().includes(term.toLowerCase());
	return { key, searchTerm: asWritten ? term : undefined };
}

/** The text as an absolute web address ("linkedin.com/in/x" gets https://), or why it is not one. */
function absoluteOf(text: string): string | { refused: string } {
	if (!text) return { refused: 'is empty' };
	const scheme = SCHEME.exec(text)?.[1]?.toLowerCase();
	let absolute = text;
	if (text.startsWith('//')) absolute = `https:${text}`;
	else if (scheme === undefined || !text.slice(scheme.length + 1).startsWith('//')) {
		// "host:port/path" reads as a scheme to a parser: a bare host is recognised by its shape.
		if (!BARE_HOST.test(text)) return { refused: 'is not a web address' };
		absolute = `https://${text}`;
	} else if (scheme !== 'http' && scheme !== 'https') return { refused: 'is not a web address' };
	if (/\s/.test(absolute)) return { refused: 'is not a web address (it contains spaces)' };
	return absolute;
}

/**
 * LinkedIn's wrappers of one profile's address, unwrapped: a link from its e-mails (/comm/in/...) is the
 * profile's own address; its sign-in page (/authwall?sessionRedirect=...) leads to the address it
 * carries, followed only to LinkedIn itself and only once.
 */
function unwrapped(absolute: string, depth = 0): string | { refused: string } {
	// Most addresses are no wrapper: not parsed twice for it.
	if (!WRAPPER_HINT.test(absolute)) return absolute;
	let url: URL;
	try {
		url = new URL(absolute);
	} catch {
		return absolute;
	}
	if (!isLinkedIn(url.hostname.toLowerCase().replace(/\.$/, ''))) return absolute;
	const section = url.pathname.split('/').find(Boolean)?.toLowerCase() ?? '';
	if (section === 'comm') return absolute.replace(/^(https?:\/\/[^/?#]+)\/+comm(?=\/)/i, '$1');
	const redirect = REDIRECT_PARAMETERS.map((name) => url.searchParams.get(name)).find(Boolean);
	if (!SIGN_IN.has(section) || !redirect) return absolute;
	const carried = withoutInvisible(redirect).trim();
	// A path alone ("/in/ada") leads to a page of the same site.
	const target = /^\/(?!\/)/.test(carried) ? `${url.origin}${carried}` : absoluteOf(carried);
	const host = typeof target === 'string' ? (parsed(target)?.hostname ?? '') : '';
	if (depth > 0 || typeof target !== 'string' || !isLinkedIn(host.toLowerCase().replace(/\.$/, '')))
		return { refused: "is LinkedIn's sign-in page leading to no LinkedIn profile" };
	return unwrapped(target, depth + 1);
}

/**
 * Redirect wrappers that exports and mail put around an address: Google's (links copied out of Docs,
 * Sheets or a search result: www.google.com/url?q=<address>&sa=D&source=editors...) and Outlook's Safe
 * Links (<region>.safelinks.protection.outlook.com/?url=<address>&data=...). Each carries the address
 * whole, percent-encoded, in one parameter.
 */
const OUTSIDE_WRAPPER_HINT = /google\.[a-z.]+\/+url\b|safelinks\.protection\.outlook\.com/i;
const GOOGLE_HOST = /^(?:www\.)?google\.(?:com|[a-z]{2}|com?\.[a-z]{2})$/;

/** The parameter of `url` that holds the wrapped address, if `url` is one of those wrappers. */
function wrappedParameter(url: URL): string | undefined | null {
	const host = url.hostname.toLowerCase().replace(/\.$/, '');
	const path = url.pathname.replace(/\/+$/, '').toLowerCase();
	if (GOOGLE_HOST.test(host) && path === '/url')
		return url.searchParams.get('q') || url.searchParams.get('url');
	if (host.endsWith('.safelinks.protection.outlook.com') && path === '')
		return url.searchParams.get('url');
	return undefined;
}

/**
 * The address a Google or Safe Links wrapper leads to, followed once and only to a web address; any
 * other address unchanged. A wrapper around no web address, or around another wrapper, names no one.
 */
function unwrappedOutside(absolute: string): string | { refused: string } {
	if (!OUTSIDE_WRAPPER_HINT.test(absolute)) return absolute;
	const url = parsed(absolute);
	const carried = url ? wrappedParameter(url) : undefined;
	if (carried === undefined) return absolute;
	const target = carried === null ? carried : withoutInvisible(carried).trim();
	const inner = target ? absoluteOf(target) : undefined;
	if (typeof inner !== 'string')
		return { refused: 'is a redirect link (Google or Outlook) that leads to no web address' };
	const again = parsed(inner);
	if (!again || wrappedParameter(again) !== undefined)
		return { refused: 'is a redirect link leading to another redirect link: it names no one' };
	return inner;
}

/**
 * The address a pasted text names, as a web address: the debris of the paste taken away (pastedText),
 * with its scheme, Google's and Outlook's redirect wrappers followed once, and LinkedIn's wrappers of a
 * profile unwrapped; or why it is not one. It is what
 * Create and Create or Update send, and what the identity rule reads.
 */
export function webAddress(raw: string): string | { refused: string } {
	const found = located(raw);
	return 'refused' in found ? found : found.address;
}

/** What webAddress gives, with the address parsed once for the identity rule. */
function located(raw: string): { address: string; url: URL } | { refused: string } {
	const pasted = pastedAddress(raw);
	const label = pasted.label;
	const absolute = absoluteOf(pasted.address);
	if (typeof absolute !== 'string') return absolute;
	// "[linkedin.com/in/a](https://linkedin.com/in/b)": which of the two was meant is not known.
	if (label && typeof absoluteOf(label) === 'string' && !sameProfile(label, absolute))
		return { refused: 'is a link whose text is another address: which one is meant is not known' };
	const outside = unwrappedOutside(absolute);
	if (typeof outside !== 'string') return outside;
	const address = unwrapped(outside);
	if (typeof address !== 'string') return address;
	// A parser reads a backslash in a path as "/": ".../in/ada。" and a backslash would name "ada。".
	if (/^[^?#]*\\/.test(address)) return { refused: 'is not a web address (it holds a backslash)' };
	const url = parsed(address);
	return url ? { address, url } : { refused: 'is not a web address' };
}

/**
 * The address parsed, or undefined. Not `URL.canParse`: on Node 20 and 22, once optimised (after a
 * few thousand calls anywhere in the process), it answers false for addresses with non-ASCII letters
 * such as "https://müller-bau.de/team/jürgen".
 */
function parsed(address: string): URL | undefined {
	try {
		return new URL(address);
	} catch {
		return undefined;
	}
}

function sameProfile(a: string, b: string): boolean {
	const [ka, kb] = [profileKey(a), profileKey(b)];
	return ka !== undefined && ka === kb;
}

/**
 * The person a profile address names, or why it names no one. The scheme is optional; white space
 * around the address is ignored.
 */
export function profileIdentity(raw: unknown): Identity {
	if (typeof raw !== 'string') return refuse('is not text');
	const found = located(raw);
	if ('refused' in found) return found;
	const { address: absolute, url } = found;
	const host = url.hostname.toLowerCase().replace(/\.$/, '');
	if (!host) return refuse('is not a web address');
	return isLinkedIn(host) ? linkedInIdentity(url) : otherSiteIdentity(url, absolute);
}

/** The key a profile address is known by, or undefined when the rule refuses it. */
export function profileKey(raw: unknown): string | undefined {
	const identity = profileIdentity(raw);
	return 'key' in identity ? identity.key : undefined;
}

/**
 * The key a stored lead's address is indexed under: its person's key, or, for an address the rule
 * refuses, its exact text (see exactKey): matched by that text only, never dropped and never taken for
 * another spelling.
 */
export function storedKey(raw: unknown): string | undefined {
	if (typeof raw !== 'string' || !raw.trim()) return undefined;
	return profileKey(raw) ?? exactKey(raw);
}

/** The exact-text key of an address (see storedKey). */
export function exactKey(raw: string): string {
	return `exact:${raw.trim()}`;
}
