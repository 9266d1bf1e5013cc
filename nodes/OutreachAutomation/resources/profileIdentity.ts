/**
 * Profile identity: the one rule that decides whether two profile addresses name the same person. Create
 * or Update matches leads by it, so a rule that is too loose merges two people and one that is too strict
 * creates a lead twice. Where in doubt it keeps people apart or refuses; docs/re-runs.md is the users'
 * table of it, and its tests are a corpus of the spellings real data carries.
 */

/** What the rule makes of one address: the person's key, or why it names no one. */
export type Identity =
	| {
			key: string;
			/**
			 * A text every usual spelling of this profile contains (case aside), for a server's search;
			 * undefined where stored spellings may differ in more than case (Unicode handles, which may be
			 * stored percent-encoded or decomposed). A spelling that percent-encodes plain letters or
			 * digits is not usual: no browser or export writes one.
			 */
			searchTerm?: string;
	  }
	| { refused: string };

const EDGE_SPACE = /^[\s\u200B-\u200D\u2060\uFEFF]+|[\s\u200B-\u200D\u2060\uFEFF]+$/g;
const SCHEME = /^([a-z][a-z0-9+.-]*):/i;
/** A host written without a scheme must look like one: "name.tld", so "n/a" or "-" is no address. */
const BARE_HOST = /^[^\s/?#:.@]+(?:\.[^\s/?#:.@]+)*\.[a-z]{2,}(?::\d+)?(?:[/?#]|$)/i;
/** LinkedIn's member ids (`/in/ACoAA...`): case matters in them, unlike in chosen handles. */
const MEMBER_ID = /^ACo[A-Za-z0-9_-]{20,}$/;
/** A handle a search can find in every stored spelling, upper or lower case. */
const PLAIN_HANDLE = /^[a-z0-9_-]+$/;

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
		.map((segment) => decode(segment).normalize('NFC'));
	// LinkedIn Lite serves profiles under /mwlite/in/<handle>.
	if (segments[0]?.toLowerCase() === 'mwlite') segments.shift();
	const [section = '', ...rest] = segments;
	switch (section.toLowerCase()) {
		case 'in': {
			// Anything after the handle is a sub-page (/details/..., /recent-activity/...) or a locale (/de).
			const handle = (rest[0] ?? '').trim();
			if (!handle) return refuse('has no profile handle after /in/: it names no one');
			if (MEMBER_ID.test(handle)) return { key: `linkedin:in/${handle}` };
			const folded = handle.toLowerCase();
			return {
				key: `linkedin:in/${folded}`,
				searchTerm: PLAIN_HANDLE.test(folded) ? folded : undefined,
			};
		}
		case 'pub': {
			// The old public address: /pub/<name>/<a>/<b>/<c>, all four parts; /pub/dir/... is a search.
			const parts = rest.slice(0, 4).map((part) => part.trim().toLowerCase());
			if (parts[0] === 'dir') return refuse('is a directory search, not a profile');
			if (parts.length < 4 || parts.some((part) => !part))
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
 * trailing slash aside. A site's root names the site, not a person.
 */
function otherSiteIdentity(url: URL): Identity {
	const path = url.pathname.replace(/\/+$/, '');
	if (!path && !url.search && !url.hash) return refuse('is the address of a site, not of a person');
	const host = url.hostname.replace(/\.$/, '');
	const key = `url:${host}${url.port ? `:${url.port}` : ''}${path}${url.search}${url.hash}`;
	return { key, searchTerm: `${host}${path}` };
}

/**
 * The address as a web address with its scheme ("linkedin.com/in/x" as CSV imports store it gets
 * https://), white space around it dropped; or why it is not one.
 */
export function webAddress(raw: string): string | { refused: string } {
	const text = raw.replace(EDGE_SPACE, '');
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
 * The person a profile address names, or why it names no one. The scheme is optional; white space
 * around the address is ignored.
 */
export function profileIdentity(raw: unknown): Identity {
	if (typeof raw !== 'string') return refuse('is not text');
	const absolute = webAddress(raw);
	if (typeof absolute !== 'string') return absolute;
	let url: URL;
	try {
		url = new URL(absolute);
	} catch {
		return refuse('is not a web address');
	}
	const host = url.hostname.toLowerCase().replace(/\.$/, '');
	if (!host) return refuse('is not a web address');
	return isLinkedIn(host) ? linkedInIdentity(url) : otherSiteIdentity(url);
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
