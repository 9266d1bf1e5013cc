/**
 * The profile identity rule on a corpus of the spellings real data carries (CRM exports, CSV imports,
 * browser extensions, copied links), and as properties: every spelling of one profile gives one key;
 * different profiles never share one; what names no one is refused.
 */
import fc from 'fast-check';

import { Store } from '../../../sandbox/store';

import {
	profileIdentity,
	profileKey,
	storedKey,
	webAddress,
} from '../../../../nodes/OutreachAutomation/resources/profileIdentity';

const ADA = 'linkedin:in/ada-lovelace';

/** [address, the key it names] : the same person whatever the spelling. */
const SAME: Array<[string, string]> = [
	['https://www.linkedin.com/in/ada-lovelace', ADA],
	['https://www.linkedin.com/in/ada-lovelace/', ADA],
	['http://www.linkedin.com/in/ada-lovelace', ADA],
	['https://linkedin.com/in/ada-lovelace', ADA],
	['www.linkedin.com/in/ada-lovelace', ADA],
	['linkedin.com/in/ada-lovelace/', ADA],
	['//www.linkedin.com/in/ada-lovelace', ADA],
	['HTTPS://WWW.LINKEDIN.COM/IN/ADA-LOVELACE', ADA],
	['https://www.linkedin.com/in/Ada-Lovelace', ADA],
	['https://uk.linkedin.com/in/ada-lovelace', ADA],
	['https://de.linkedin.com/in/ada-lovelace/', ADA],
	['https://m.linkedin.com/in/ada-lovelace/', ADA],
	['https://www.linkedin.com./in/ada-lovelace', ADA],
	['https://www.linkedin.com/mwlite/in/ada-lovelace', ADA],
	['https://www.linkedin.com/in/ada-lovelace?trk=public_profile', ADA],
	['https://www.linkedin.com/in/ada-lovelace/?utm_source=share&utm_medium=member_desktop', ADA],
	['https://www.linkedin.com/in/ada-lovelace#experience', ADA],
	['https://www.linkedin.com/in/ada-lovelace/details/experience/', ADA],
	['https://www.linkedin.com/in/ada-lovelace/overlay/contact-info/', ADA],
	['https://www.linkedin.com/in/ada-lovelace/recent-activity/all/', ADA],
	['https://www.linkedin.com/in/ada-lovelace/de', ADA],
	['https://www.linkedin.com/in/ada-lovelace/fr?originalSubdomain=fr', ADA],
	['  https://www.linkedin.com/in/ada-lovelace  ', ADA],
	['\thttps://www.linkedin.com/in/ada-lovelace\n', ADA],
	['\u200Bhttps://www.linkedin.com/in/ada-lovelace\uFEFF', ADA],
	['https://www.linkedin.com:443/in/ada-lovelace', ADA],
	['https://www.linkedin.com//in//ada-lovelace', ADA],
	['https://www.linkedin.com/in/ada%2Dlovelace', ADA],
	// Unicode handles: encoded or not, composed or not, any case.
	['https://www.linkedin.com/in/j%C3%BCrgen-m', 'linkedin:in/jürgen-m'],
	['https://www.linkedin.com/in/J%C3%9Crgen-M', 'linkedin:in/jürgen-m'],
	['https://www.linkedin.com/in/j%c3%bcrgen-m/', 'linkedin:in/jürgen-m'],
	['https://www.linkedin.com/in/jürgen-m', 'linkedin:in/jürgen-m'],
	['https://www.linkedin.com/in/ju\u0308rgen-m', 'linkedin:in/jürgen-m'],
	['https://www.linkedin.com/in/JÜRGEN-M', 'linkedin:in/jürgen-m'],
	['https://www.linkedin.com/in/%E7%8E%8B%E8%8A%B3', 'linkedin:in/王芳'],
	['linkedin.com/in/王芳', 'linkedin:in/王芳'],
	['https://www.linkedin.com/in/zo%C3%AB-d', 'linkedin:in/zoë-d'],
	// The old public address is kept whole; case aside.
	['http://www.linkedin.com/pub/ada-lovelace/1a/2b3/4c5', 'linkedin:pub/ada-lovelace/1a/2b3/4c5'],
	['https://uk.linkedin.com/pub/Ada-Lovelace/1A/2B3/4C5/', 'linkedin:pub/ada-lovelace/1a/2b3/4c5'],
	['linkedin.com/pub/ada-lovelace/1a/2b3/4c5?trk=x', 'linkedin:pub/ada-lovelace/1a/2b3/4c5'],
	// The member id names the member; the rest of the query does not.
	['https://www.linkedin.com/profile/view?id=1001', 'linkedin:id/1001'],
	['https://www.linkedin.com/profile/view?trk=nav&id=1001', 'linkedin:id/1001'],
	['http://linkedin.com/profile/view?id=1001&authType=name', 'linkedin:id/1001'],
	// Member ids: case kept (they are case-sensitive ids, not chosen handles).
	[
		'https://www.linkedin.com/in/ACoAAA8BYqEBCGLg_vT_ca6mMEqkpp9nVffJ3hc',
		'linkedin:in/ACoAAA8BYqEBCGLg_vT_ca6mMEqkpp9nVffJ3hc',
	],
	[
		'https://www.linkedin.com/sales/lead/ACwAAB1234567890abcdefghij,NAME_SEARCH,x1y2',
		'linkedin:sales/ACwAAB1234567890abcdefghij',
	],
	[
		'https://www.linkedin.com/sales/people/ACwAAB1234567890abcdefghij,name',
		'linkedin:sales/ACwAAB1234567890abcdefghij',
	],
	// Other sites: scheme, host case and a trailing slash aside, the same address.
	['https://github.com/ada', 'url:github.com/ada'],
	['http://GitHub.com/ada/', 'url:github.com/ada'],
	['github.com/ada', 'url:github.com/ada'],
	['https://xing.com/profile/Ada_Lovelace', 'url:xing.com/profile/Ada_Lovelace'],
	['https://ada.dev/about?lang=en', 'url:ada.dev/about?lang=en'],
	// What a paste leaves: cleaned, never a new person.
	['https://www.linkedin.com/in/ada-lovelace.', ADA],
	['https://www.linkedin.com/in/ada-lovelace/,', ADA],
	['https://www.linkedin.com/in/ada-lovelace)', ADA],
	['https://www.linkedin.com/in/ada-lovelace>', ADA],
	['https://www.linkedin.com/in/ada-lovelace"', ADA],
	['https://www.linkedin.com/in/ada-lovelace?!', ADA],
	['https://www.linkedin.com/in/ada-lovelace。', ADA],
	['<https://www.linkedin.com/in/ada-lovelace>', ADA],
	['"https://www.linkedin.com/in/ada-lovelace"', ADA],
	["'linkedin.com/in/ada-lovelace'", ADA],
	['“https://www.linkedin.com/in/ada-lovelace”', ADA],
	['«https://www.linkedin.com/in/ada-lovelace»', ADA],
	['(https://www.linkedin.com/in/ada-lovelace).', ADA],
	['"<https://www.linkedin.com/in/ada-lovelace>",', ADA],
	['**https://www.linkedin.com/in/ada-lovelace**', ADA],
	['[Ada Lovelace](https://www.linkedin.com/in/ada-lovelace)', ADA],
	['[Ada](<https://www.linkedin.com/in/ada-lovelace/>).', ADA],
	['[linkedin.com/in/ada-lovelace](https://www.linkedin.com/in/Ada-Lovelace?trk=x)', ADA],
	['https://www.linkedin.com/in/ada-​lovelace', ADA],
	['https://www.linkedin.com/in/ada-love­lace', ADA],
	['https://www.linkedin.com/in/ada-lovelace%E2%80%8B', ADA],
	['﻿‎https://www.linkedin.com/in/ada-lovelace‏', ADA],
	['https://www.linkedin.com/in/ada-‌lovelace', ADA],
	['https://en.wikipedia.org/wiki/Ada_(name)', 'url:en.wikipedia.org/wiki/Ada_(name)'],
	['https://en.wikipedia.org/wiki/Ada_(name)).', 'url:en.wikipedia.org/wiki/Ada_(name)'],
	['<https://github.com/ada>', 'url:github.com/ada'],
	// LinkedIn's wrappers of one profile: its e-mails' links and its sign-in page.
	['https://www.linkedin.com/comm/in/ada-lovelace?midToken=AQFbl_rM&trk=eml-header-5-profile', ADA],
	['https://uk.linkedin.com/comm/in/Ada-Lovelace/', ADA],
	[
		'https://www.linkedin.com/authwall?trk=bf&trkInfo=AQGKMGxS&original_referer=&sessionRedirect=https%3A%2F%2Fwww.linkedin.com%2Fin%2Fada-lovelace',
		ADA,
	],
	[
		'https://www.linkedin.com/authwall?sessionRedirect=https%3A%2F%2Fuk.linkedin.com%2Fin%2Fada-lovelace%2F',
		ADA,
	],
	['https://www.linkedin.com/uas/login?session_redirect=%2Fin%2Fada-lovelace', ADA],
	[
		'https://www.linkedin.com/login?session_redirect=https%3A%2F%2Fwww.linkedin.com%2Fcomm%2Fin%2Fada-lovelace',
		ADA,
	],
	[
		'https://www.linkedin.com/signup/cold-join?session_redirect=https%3A%2F%2Fwww.linkedin.com%2Fin%2Fada-lovelace',
		ADA,
	],
	// A vanity handle that begins like a member id is a vanity handle: any letter case.
	[
		'https://www.linkedin.com/in/ACoolDataEngineerFromBerlin',
		'linkedin:in/acooldataengineerfromberlin',
	],
	[
		'https://www.linkedin.com/in/acooldataengineerfromberlin/',
		'linkedin:in/acooldataengineerfromberlin',
	],
	['https://www.linkedin.com/in/ACoAAProductLead', 'linkedin:in/acoaaproductlead'],
	// Redirect wrappers of exports and mail, followed once: Google Docs and Sheets (q=), Google's
	// older form (url=), a country's Google, Outlook's Safe Links.
	[
		'https://www.google.com/url?q=https://www.linkedin.com/in/ada-lovelace&sa=D&source=editors&ust=1732870000000000&usg=AOvVaw2Kx9fZ',
		ADA,
	],
	[
		'https://www.google.com/url?q=https%3A%2F%2Fuk.linkedin.com%2Fin%2FAda-Lovelace%2F&sa=D&source=editors&ust=1732870000000000&usg=AOvVaw2Kx9fZ',
		ADA,
	],
	[
		'https://www.google.com/url?sa=t&url=https%3A%2F%2Fwww.linkedin.com%2Fin%2Fada-lovelace&usg=x',
		ADA,
	],
	['www.google.co.uk/url?q=https://www.linkedin.com/in/ada-lovelace/%3Ftrk%3Dx&sa=D', ADA],
	[
		'https://eur01.safelinks.protection.outlook.com/?url=https%3A%2F%2Fwww.linkedin.com%2Fin%2Fada-lovelace&data=05%7C02%7Cada%40acme.com%7C&sdata=Zm9v%3D&reserved=0',
		ADA,
	],
	[
		'<https://www.google.com/url?q=https://github.com/ada&sa=D&source=editors>',
		'url:github.com/ada',
	],
];

/** Pairs that look alike but name different people (or may): never one key. */
const DIFFERENT: Array<[string, string]> = [
	[
		'https://www.linkedin.com/profile/view?id=1001',
		'https://www.linkedin.com/profile/view?id=1002',
	],
	['https://www.linkedin.com/in/ada-lovelace', 'https://www.linkedin.com/in/ada-lovelace-1'],
	['https://www.linkedin.com/in/ada-lovelace', 'https://www.linkedin.com/in/ada-lovelace-b'],
	['https://www.linkedin.com/in/jurgen-m', 'https://www.linkedin.com/in/jürgen-m'],
	['https://www.linkedin.com/pub/ada/1a/2b3/4c5', 'https://www.linkedin.com/pub/ada/1a/2b3/4c6'],
	[
		'https://www.linkedin.com/in/ACoAAA8BYqEBCGLg_vT_ca6mMEqkpp9nVffJ3hc',
		'https://www.linkedin.com/in/ACoAAA8BYqEBCGLg_vT_ca6mMEqkpp9nVffJ3hC',
	],
	['https://www.linkedin.com/in/ada-lovelace', 'https://github.com/in/ada-lovelace'],
	['https://github.com/Ada', 'https://github.com/ada'],
	['https://example.com/people?id=1', 'https://example.com/people?id=2'],
	['https://app.example.com/people#1', 'https://app.example.com/people#2'],
	// A zero-width non-joiner between two Persian letters is part of the name: kept, never merged.
	[
		'https://www.linkedin.com/in/%D9%85%DB%8C%E2%80%8C%D8%B1%D8%A7',
		'https://www.linkedin.com/in/%D9%85%DB%8C%D8%B1%D8%A7',
	],
	[
		'[Ada](https://www.linkedin.com/in/ada-lovelace)',
		'[Ada](https://www.linkedin.com/in/ada-byron)',
	],
	[
		'https://www.linkedin.com/comm/in/ada-lovelace',
		'https://www.linkedin.com/comm/in/ada-lovelace-1',
	],
	['https://www.linkedin.com/in/ada', 'https://www.linkedin.com/pub/ada/1/2/3'],
	// Two people behind the same wrapper stay two.
	[
		'https://www.google.com/url?q=https://www.linkedin.com/in/ada-lovelace&sa=D&source=editors&usg=a',
		'https://www.google.com/url?q=https://www.linkedin.com/in/ada-lovelace-1&sa=D&source=editors&usg=a',
	],
	[
		'https://www.google.com/url?q=https://www.linkedin.com/in/ada-lovelace&sa=D',
		'https://eur01.safelinks.protection.outlook.com/?url=https%3A%2F%2Fwww.linkedin.com%2Fin%2Fgrace-hopper&reserved=0',
	],
];

/** Addresses that name no one, and a word of the reason given. */
const REFUSED: Array<[unknown, RegExp]> = [
	['https://www.linkedin.com/in/', /no profile handle/],
	['https://www.linkedin.com/in', /no profile handle/],
	['https://www.linkedin.com/in/%20/', /no profile handle/],
	['linkedin.com/in/', /no profile handle/],
	['https://www.linkedin.com/', /names no one/],
	['https://www.linkedin.com', /names no one/],
	['www.linkedin.com', /names no one/],
	['https://www.linkedin.com/feed/', /LinkedIn page \(\/feed\//],
	['https://www.linkedin.com/company/acme/', /LinkedIn page \(\/company\//],
	['https://www.linkedin.com/school/mit/', /LinkedIn page/],
	['https://www.linkedin.com/jobs/view/123', /LinkedIn page/],
	['https://www.linkedin.com/search/results/people/?keywords=ada', /LinkedIn page/],
	['https://www.linkedin.com/pub/dir/ada/lovelace', /directory search/],
	['https://www.linkedin.com/pub/ada-lovelace/1a/2b3', /incomplete \/pub\//],
	['https://www.linkedin.com/profile/view', /without a member id/],
	['https://www.linkedin.com/profile/view?trk=x', /without a member id/],
	['https://www.linkedin.com/sales/search/people', /Sales Navigator page/],
	['https://acme.com', /site, not of a person/],
	['https://acme.com/', /site, not of a person/],
	['acme.com', /site, not of a person/],
	['', /empty/],
	['   ', /empty/],
	['n/a', /not a web address/],
	['-', /not a web address/],
	['Ada Lovelace', /not a web address/],
	['ada@example.com', /not a web address/],
	['mailto:ada@example.com', /not a web address/],
	['ftp://linkedin.com/in/ada', /not a web address/],
	['javascript:alert(1)', /not a web address/],
	['https://exa mple.com/in/x', /not a web address/],
	['https://', /not a web address/],
	// LinkedIn's placeholders and the viewer's own page.
	['https://www.linkedin.com/in/unavailable/', /not available/],
	['https://www.linkedin.com/in/Unavailable?trk=x', /not available/],
	['https://www.linkedin.com/in/me', /whoever opens it/],
	['https://www.linkedin.com/in/me/details/experience/', /whoever opens it/],
	['https://www.linkedin.com/comm/in/me', /whoever opens it/],
	// Handles of punctuation or invisible characters only.
	['https://www.linkedin.com/in/-', /no letter or digit/],
	['https://www.linkedin.com/in/--_/', /no letter or digit/],
	['https://www.linkedin.com/in/%E2%80%94', /no letter or digit/],
	['https://www.linkedin.com/in/​', /no profile handle/],
	['https://www.linkedin.com/in/%E2%80%8B/', /no profile handle/],
	['https://www.linkedin.com/in/­﻿', /no profile handle/],
	['https://www.linkedin.com/pub/-/1a/2b3/4c5', /incomplete \/pub\//],
	// A site's root names the site, whatever follows it.
	['https://acme.com/?utm_source=crm', /site, not of a person/],
	['https://acme.com/#team', /site, not of a person/],
	['acme.com?ref=linkedin', /site, not of a person/],
	['https://app.example.com/#/people/1', /site, not of a person/],
	// Wrappers that lead nowhere, or elsewhere.
	['https://www.linkedin.com/authwall?trk=bf', /LinkedIn page \(\/authwall\//],
	[
		'https://www.linkedin.com/authwall?sessionRedirect=https%3A%2F%2Fevil.example%2Fin%2Fada',
		/sign-in page/,
	],
	[
		'https://www.linkedin.com/authwall?sessionRedirect=https%3A%2F%2Fwww.linkedin.com%2Fauthwall%3FsessionRedirect%3D%252Fin%252Fada',
		/sign-in page/,
	],
	['https://www.linkedin.com/redir/redirect?url=https%3A%2F%2Fgithub.com%2Fada', /LinkedIn page/],
	['https://www.google.com/url?q=ada+lovelace&sa=D', /redirect link .* no web address/],
	['https://www.google.com/url?sa=D&source=editors', /redirect link .* no web address/],
	[
		'https://www.google.com/url?q=https://www.google.com/url?q%3Dhttps://www.linkedin.com/in/ada',
		/another redirect link/,
	],
	[
		'https://eur01.safelinks.protection.outlook.com/?url=https%3A%2F%2Fwww.google.com%2Furl%3Fq%3Dhttps%3A%2F%2Fwww.linkedin.com%2Fin%2Fada',
		/another redirect link/,
	],
	['https://www.linkedin.com/comm/feed/', /LinkedIn page \(\/feed\//],
	// A paste that is not one address.
	[
		'[linkedin.com/in/ada-byron](https://www.linkedin.com/in/ada-lovelace)',
		/link whose text is another address/,
	],
	['<a href="https://www.linkedin.com/in/ada-lovelace">Ada</a>', /not a web address/],
	['https://www.linkedin.com/in/ada https://www.linkedin.com/in/bob', /not a web address/],
	[
		'https://www.linkedin.com/in/adahttps://www.linkedin.com/in/bob',
		/characters no LinkedIn handle has/,
	],
	['https://www.linkedin.com/in/ada%20lovelace', /characters no LinkedIn handle has/],
	// A stray "%" is a typo: no handle has one.
	['https://www.linkedin.com/in/100%-ada', /characters no LinkedIn handle has/],
	[undefined, /not text/],
	[42, /not text/],
];

describe('profile identity: the corpus', () => {
	it('holds at least 60 shapes', () => {
		expect(SAME.length + DIFFERENT.length * 2 + REFUSED.length).toBeGreaterThanOrEqual(60);
	});

	it.each(SAME)('%j names %s', (address, key) => {
		expect(profileKey(address)).toBe(key);
	});

	it.each(DIFFERENT)('%j and %j are different people', (a, b) => {
		const [ka, kb] = [profileKey(a), profileKey(b)];
		expect(ka).toBeDefined();
		expect(kb).toBeDefined();
		expect(ka).not.toBe(kb);
	});

	it.each(REFUSED)('%j is refused (%s)', (address, reason) => {
		const identity = profileIdentity(address);
		expect(identity).toEqual({ refused: expect.stringMatching(reason) });
	});

	it('a search term is given only where every usual spelling of the profile contains it, case aside', () => {
		// Percent-encoding a plain letter or "-", or an invisible character inside an address, is no usual
		// spelling: no browser or export writes one.
		const usual = SAME.filter(
			([address]) => !/%2D|%E2%80%8B|[^\s\uFEFF\u200E][\u00AD\u200B\u200C]/i.test(address),
		);
		for (const [address, key] of usual) {
			const identity = profileIdentity(address);
			if (!('key' in identity) || identity.searchTerm === undefined) continue;
			for (const [other, otherKey] of SAME) {
				if (otherKey !== key || /%2D/i.test(other)) continue;
				// Every usual spelling as stored by another tool, and every spelling as this node stores it.
				if (usual.some(([u]) => u === other))
					expect(other.toLowerCase()).toContain(identity.searchTerm.toLowerCase());
				expect(String(webAddress(other)).toLowerCase()).toContain(
					identity.searchTerm.toLowerCase(),
				);
			}
		}
		// Another site's address the URL parser rewrites (punycode, percent-escapes) is not searched for.
		for (const address of ['https://müller.de/team/jan', 'https://example.com/team/zoë']) {
			expect(profileIdentity(address)).toEqual({ key: expect.any(String), searchTerm: undefined });
		}
		// Encoded or Unicode handles are not searched for: their stored spellings differ in more than case.
		expect(profileIdentity('https://www.linkedin.com/in/jürgen-m')).not.toHaveProperty(
			'searchTerm',
			expect.anything(),
		);
	});

	it("the search term's promise on the sandbox's substring search: every lead stored in a usual spelling of a key is found, for every kind of key", () => {
		const store = new Store();
		const usual = SAME.filter(
			([address]) => !/%2D|%E2%80%8B|[^\s\uFEFF\u200E][\u00AD\u200B\u200C]/i.test(address),
		);
		// Stored as another tool wrote it, and as this node sends it.
		for (const [address] of usual) {
			store.addLead({ first_name: 'As written', linkedin_url: address });
			store.addLead({ first_name: 'As sent', linkedin_url: String(webAddress(address)) });
		}
		const kinds = new Set<string>();
		for (const [address, key] of usual) {
			const identity = profileIdentity(address);
			if (!('key' in identity) || identity.searchTerm === undefined) continue;
			kinds.add(key.split(/[:/]/).slice(0, 2).join(':'));
			const found = new Set(
				store.findLeads({ search: identity.searchTerm.toUpperCase() }, 'record').map((l) => l.id),
			);
			const stored = [...store.leads.values()].filter((l) => profileKey(l.linkedin_url) === key);
			expect(stored.filter((l) => !found.has(l.id)).map((l) => l.linkedin_url)).toEqual([]);
		}
		// /in/ handles, /pub/ addresses, /profile/view ids, other sites' addresses.
		expect([...kinds].sort()).toEqual(
			[
				'linkedin:id',
				'linkedin:in',
				'linkedin:pub',
				'url:en.wikipedia.org',
				'url:github.com',
				'url:xing.com',
				'url:ada.dev',
			].sort(),
		);
	});

	it('a stored address the rule refuses is kept under its exact text, never dropped', () => {
		expect(storedKey('https://www.linkedin.com/in/')).toBe('exact:https://www.linkedin.com/in/');
		expect(storedKey('www.linkedin.com/in/ada-lovelace')).toBe(ADA);
		expect(storedKey('')).toBeUndefined();
		expect(storedKey(null)).toBeUndefined();
	});
});

// ---- properties

const handleChar = fc.constantFrom(
	...'abcdefghijklmnopqrstuvwxyz0123456789-_'.split(''),
	'é',
	'ü',
	'ø',
	'王',
);
const handle = fc
	.array(handleChar, { minLength: 1, maxLength: 20 })
	.map((chars) => chars.join(''))
	// A handle names someone with a letter or a digit, and is none of LinkedIn's placeholders.
	.filter((h) => /[\p{L}\p{N}]/u.test(h) && !['me', 'unavailable'].includes(h));

/** One spelling of the profile /in/<handle>, drawn from what real data carries. */
const spelling = (h: string) =>
	fc
		.record({
			scheme: fc.constantFrom('https://', 'http://', '', '//', 'HTTPS://'),
			host: fc.constantFrom(
				'www.linkedin.com',
				'linkedin.com',
				'uk.linkedin.com',
				'm.linkedin.com',
				'WWW.LinkedIn.com',
				'de.linkedin.com.',
			),
			lite: fc.boolean(),
			section: fc.constantFrom('in', 'IN', 'In'),
			upper: fc.boolean(),
			encode: fc.boolean(),
			nfd: fc.boolean(),
			tail: fc.constantFrom(
				'',
				'/',
				'/details/experience/',
				'/recent-activity/all/',
				'/de',
				'/overlay/contact-info/',
			),
			query: fc.constantFrom(
				'',
				'?trk=public_profile',
				'?utm_source=share&utm_medium=member_desktop',
				'?originalSubdomain=uk',
			),
			hash: fc.constantFrom('', '#about'),
			space: fc.constantFrom('', ' ', '\t', '\n', '\u200B'),
		})
		.map((s) => {
			let text = s.upper ? h.toUpperCase() : h;
			if (s.nfd) text = text.normalize('NFD');
			if (s.encode) text = encodeURIComponent(text);
			const scheme = s.scheme === '' && s.host.endsWith('.') ? 'https://' : s.scheme;
			return `${s.space}${scheme}${s.host}${s.lite ? '/mwlite' : ''}/${s.section}/${text}${s.tail}${s.query}${s.hash}${s.space}`;
		});

describe('profile identity: properties', () => {
	it('every pair of spellings of one profile gives one key', () => {
		fc.assert(
			fc.property(
				handle.chain((h) => fc.tuple(fc.constant(h), spelling(h), spelling(h))),
				([h, a, b]) => {
					const key = `linkedin:in/${h.normalize('NFC').toLowerCase()}`;
					expect(profileKey(a)).toBe(key);
					expect(profileKey(b)).toBe(key);
				},
			),
			{ numRuns: 2000, seed: 36 },
		);
	});

	it('different profiles never share a key, whatever their spellings', () => {
		fc.assert(
			fc.property(
				fc
					.tuple(handle, handle)
					.filter(([a, b]) => a.normalize('NFC').toLowerCase() !== b.normalize('NFC').toLowerCase())
					.chain(([a, b]) => fc.tuple(spelling(a), spelling(b))),
				([a, b]) => {
					expect(profileKey(a)).not.toBe(profileKey(b));
				},
			),
			{ numRuns: 2000, seed: 37 },
		);
	});

	it('different member ids of /profile/view never share a key', () => {
		fc.assert(
			fc.property(
				fc
					.tuple(fc.integer({ min: 1, max: 1e9 }), fc.integer({ min: 1, max: 1e9 }))
					.filter(([a, b]) => a !== b),
				([a, b]) => {
					const url = (id: number) => `https://www.linkedin.com/profile/view?id=${id}&trk=x`;
					expect(profileKey(url(a))).not.toBe(profileKey(url(b)));
				},
			),
			{ numRuns: 500, seed: 38 },
		);
	});

	it('any text either names a key or is refused with a reason; it never throws', () => {
		fc.assert(
			fc.property(
				fc.oneof(fc.string(), fc.webUrl({ withQueryParameters: true, withFragments: true })),
				(text) => {
					const identity = profileIdentity(text);
					expect('key' in identity ? identity.key.length : identity.refused.length).toBeGreaterThan(
						0,
					);
				},
			),
			{ numRuns: 2000, seed: 39 },
		);
	});
});

// ---- what a paste leaves, and LinkedIn's wrappers

/**
 * One spelling of /in/<handle>, maybe inside one of LinkedIn's wrappers of a profile's address, or a
 * redirect wrapper of Google (Docs, Sheets, search) or Outlook (Safe Links).
 */
const wrapped = (h: string) =>
	fc
		.tuple(
			spelling(h),
			fc.constantFrom('none', 'comm', 'authwall', 'login', 'google', 'docs', 'safelinks'),
		)
		.map(([address, wrapper]) => {
			const bare = address.trim();
			const core = bare.replace(/^\u200B+|\u200B+$/g, '');
			const absolute = /^https?:/i.test(core)
				? core
				: `https:${core.startsWith('//') ? '' : '//'}${core}`;
			// Google's links out of Docs and Sheets: only what would end the parameter is escaped.
			if (wrapper === 'docs')
				return `https://www.google.com/url?q=${absolute.replace(/[%?&=#+]/g, encodeURIComponent)}&sa=D&source=editors&ust=1732870000000000&usg=AOvVaw2Kx9fZ`;
			if (wrapper === 'google')
				return `https://www.google.com/url?sa=t&url=${encodeURIComponent(absolute)}&usg=AOvVaw2Kx9fZ`;
			if (wrapper === 'safelinks')
				return `https://eur01.safelinks.protection.outlook.com/?url=${encodeURIComponent(absolute)}&data=05%7C02%7C&sdata=Zm9v%3D&reserved=0`;
			if (wrapper === 'comm') return address.replace(/\/(in|IN|In)\//, '/comm/$1/');
			if (wrapper === 'authwall')
				return `https://www.linkedin.com/authwall?trk=bf&original_referer=&sessionRedirect=${encodeURIComponent(bare.startsWith('//') ? `https:${bare}` : bare)}`;
			if (wrapper === 'login')
				return `https://www.linkedin.com/uas/login?session_redirect=${encodeURIComponent(bare.replace(/^[^/]*\/\/[^/]+|^[^/]+/, ''))}`;
			return address;
		});

/** What copy-paste leaves around and inside an address, all of which the rule cleans. */
const debris = (address: string) =>
	fc
		.record({
			wrap: fc.constantFrom<[string, string]>(
				['', ''],
				['<', '>'],
				['"', '"'],
				["'", "'"],
				['\u201C', '\u201D'],
				['\u00AB', '\u00BB'],
				['(', ')'],
				['**', '**'],
				['[Profile](', ')'],
				['[Ada Lovelace](<', '>)'],
				['"<', '>"'],
			),
			trail: fc.constantFrom(
				'',
				'.',
				',',
				';',
				':',
				'!',
				'?',
				')',
				'>',
				'"',
				'.)',
				'),',
				'\u3002',
				'\u2026',
			),
			invisible: fc.constantFrom('', '\u200B', '\u00AD', '\uFEFF', '\u2060', '\u200E', '\u202C'),
			at: fc.nat(),
		})
		.map(({ wrap: [open, close], trail, invisible, at }) => {
			const cut = at % (address.length + 1);
			const inside = `${address.slice(0, cut)}${invisible}${address.slice(cut)}`;
			return `${open}${inside}${close}${trail}`;
		});

/** Text a paste may carry that no rule can clean, before and after the address. */
const junk = fc.oneof(
	fc
		.constantFrom(
			'Ada Lovelace: ',
			'LinkedIn - ',
			'|',
			'{',
			'%',
			'https://www.linkedin.com/in/bob, ',
			'https://www.linkedin.com/in/bob;',
			'www.linkedin.com/in/bob,',
		)
		.map((text) => ({ text, before: true })),
	fc
		.constantFrom(
			' and more',
			' (Ada)',
			'|',
			'\\',
			'{',
			'%',
			',https://www.linkedin.com/in/bob',
			'; https://www.linkedin.com/in/bob',
			'\nhttps://www.linkedin.com/in/bob',
			'|www.linkedin.com/in/bob',
		)
		.map((text) => ({ text, before: false })),
);

describe('profile identity: debris and wrappers', () => {
	const keyOf = (h: string) => `linkedin:in/${h.normalize('NFC').toLowerCase()}`;

	it('every spelling of one profile, wrapped or not, with any debris, gives its key', () => {
		fc.assert(
			fc.property(
				handle.chain((h) => fc.tuple(fc.constant(h), wrapped(h).chain(debris))),
				([h, text]) => {
					expect(profileKey(text)).toBe(keyOf(h));
				},
			),
			{ numRuns: 2000, seed: 56 },
		);
	});

	it('text no rule can clean around a spelling gives its key or a refusal, never another key', () => {
		fc.assert(
			fc.property(
				handle.chain((h) => fc.tuple(fc.constant(h), wrapped(h).chain(debris), junk)),
				([h, text, { text: extra, before }]) => {
					const key = profileKey(before ? `${extra}${text}` : `${text}${extra}`);
					if (key !== undefined) expect(key).toBe(keyOf(h));
				},
			),
			{ numRuns: 2000, seed: 57 },
		);
	});

	it('different profiles never share a key, whatever their wrappers and debris', () => {
		fc.assert(
			fc.property(
				fc
					.tuple(handle, handle)
					.filter(([a, b]) => keyOf(a) !== keyOf(b))
					.chain(([a, b]) => fc.tuple(wrapped(a).chain(debris), wrapped(b).chain(debris))),
				([a, b]) => {
					expect(profileKey(a)).not.toBe(profileKey(b));
				},
			),
			{ numRuns: 2000, seed: 58 },
		);
	});

	it("two people's addresses behind Google's or Outlook's redirect never share a key, on LinkedIn or any site", () => {
		const site = fc.constantFrom('github.com', 'xing.com', 'acme.com/team', 'ada.dev/about');
		const person = fc.oneof(
			handle.map((h) => `https://www.linkedin.com/in/${encodeURIComponent(h)}`),
			fc.tuple(site, handle).map(([s, h]) => `https://${s}/${encodeURIComponent(h)}`),
		);
		const wrap = (address: string, how: number) =>
			[
				`https://www.google.com/url?q=${address}&sa=D&source=editors&ust=1&usg=x`,
				`https://www.google.com/url?sa=t&url=${encodeURIComponent(address)}`,
				`https://nam12.safelinks.protection.outlook.com/?url=${encodeURIComponent(address)}&reserved=0`,
				address,
			][how];
		fc.assert(
			fc.property(
				fc
					.tuple(person, person)
					.filter(([a, b]) => profileKey(a) !== undefined && profileKey(a) !== profileKey(b)),
				fc.integer({ min: 0, max: 3 }),
				fc.integer({ min: 0, max: 2 }),
				([a, b], howA, howB) => {
					const [wa, wb] = [wrap(a, howA), wrap(b, howB)];
					expect(profileKey(wa)).toBe(profileKey(a));
					expect(profileKey(wb)).not.toBe(profileKey(wa));
				},
			),
			{ numRuns: 3000, seed: 64 },
		);
	});
});
