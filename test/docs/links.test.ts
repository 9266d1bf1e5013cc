/**
 * Every address the package hands to n8n lands: the credential's `documentationUrl` (the "Docs" link of the
 * credential dialog), each node's `documentationUrl`, the codex files' `resources` (the node panel's and the
 * node's "Docs" links) and any address of this repository in a node's or credential's texts. Each must point
 * into this repository (package.json's `repository`): its README or a file under docs/ on the main branch,
 * and at a heading that exists there, spelt as GitHub spells anchors.
 */
import fs from 'node:fs';
import path from 'node:path';

import { anchorsOf, anchorsOfText, githubSlug, headingText } from './anchors';

const ROOT = path.resolve(__dirname, '..', '..');
const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
	repository: { url: string };
	n8n: { credentials: string[]; nodes: string[] };
};

/** `git+https://github.com/owner/name.git` -> `https://github.com/owner/name`. */
export function repositoryWebUrl(url: string): string {
	const match =
		/^(?:git\+)?(?:https?|git|ssh):\/\/(?:git@)?github\.com[/:]([^/]+\/[^/]+?)(?:\.git)?\/?$/.exec(
			url,
		);
	if (!match) throw new Error(`package.json repository.url is not a GitHub repository: ${url}`);
	return `https://github.com/${match[1]}`;
}

const REPOSITORY = repositoryWebUrl(manifest.repository.url);

interface Shipped {
	/** Where n8n gets it from, e.g. "OutreachAutomation.node.json resources.primaryDocumentation". */
	where: string;
	url: string;
}

/** A shipped file (`dist/.../X.node.js`) as its source (`.../X.node.ts`), and the class it exports. */
function load<T>(file: string): { source: string; instance: T } {
	const source = path.join(ROOT, file.replace(/^dist\//, '').replace(/\.js$/, ''));
	const exported = require(source) as Record<string, new () => T>;
	const Class = exported[path.basename(source).split('.')[0]];
	if (!Class) throw new Error(`${file}: no exported class in ${source}`);
	return { source, instance: new Class() };
}

/** Every string under `value` (with its path) that holds an address of this repository. */
function repositoryStrings(value: unknown, where: string): Shipped[] {
	if (typeof value === 'string') {
		const found = value.match(/https:\/\/github\.com\/[^\s"'<>)]+/g) ?? [];
		return found
			.filter((url) => url.toLowerCase().startsWith(REPOSITORY.toLowerCase()))
			.map((url) => ({ where, url }));
	}
	if (Array.isArray(value))
		return value.flatMap((entry, i) => repositoryStrings(entry, `${where}[${i}]`));
	if (value && typeof value === 'object')
		return Object.entries(value).flatMap(([key, entry]) =>
			repositoryStrings(entry, `${where}.${key}`),
		);
	return [];
}

/** Every `url` in a codex file's `resources`. */
function codexUrls(codex: { resources?: Record<string, Array<{ url: string }>> }, file: string) {
	return Object.entries(codex.resources ?? {}).flatMap(([kind, entries]) =>
		entries.map((entry) => ({ where: `${file} resources.${kind}`, url: entry.url })),
	);
}

/** Every address the package hands to n8n, found from package.json's `n8n` section as n8n finds them. */
function shippedUrls(): Shipped[] {
	const urls: Shipped[] = [];
	for (const file of manifest.n8n.credentials) {
		const { instance } = load<{ name: string; documentationUrl?: string }>(file);
		const where = `credential ${instance.name}`;
		urls.push({ where: `${where} documentationUrl`, url: instance.documentationUrl ?? '' });
		urls.push(
			...repositoryStrings({ ...instance, documentationUrl: undefined }, where).filter(
				(u) => !u.where.endsWith('.documentationUrl'),
			),
		);
	}
	for (const file of manifest.n8n.nodes) {
		const { source, instance } = load<{ description: Record<string, unknown> }>(file);
		const name = path.basename(source, '.ts');
		const { documentationUrl, ...rest } = instance.description;
		if (documentationUrl !== undefined)
			urls.push({ where: `${name} documentationUrl`, url: String(documentationUrl) });
		urls.push(...repositoryStrings(rest, name));
		const codexFile = `${source.replace(/\.ts$/, '')}.json`;
		if (fs.existsSync(codexFile))
			urls.push(
				...codexUrls(JSON.parse(fs.readFileSync(codexFile, 'utf8')), path.basename(codexFile)),
			);
	}
	return urls;
}

/** What is wrong with an address, or undefined when it lands on a heading of the README or of docs/. */
export function problemOf(url: string, anchorsFor = anchorsOf): string | undefined {
	if (!url.startsWith(REPOSITORY)) return `not an address of this repository (${REPOSITORY})`;
	const rest = url.slice(REPOSITORY.length);
	const match = /^(?:\/blob\/main\/((?:docs\/[\w.-]+\.md)|README\.md))?(?:#(.*))?$/.exec(rest);
	if (!match) return 'neither the README nor a Markdown file under docs/ on the main branch';
	const file = match[1] ?? 'README.md';
	const anchor = match[2];
	if (!fs.existsSync(path.join(ROOT, file))) return `${file} does not exist`;
	if (anchor === undefined || anchor === '') return 'no anchor: it lands at the top of the page';
	if (!anchorsFor(path.join(ROOT, file)).has(decodeURIComponent(anchor)))
		return `${file} has no heading with the anchor "#${anchor}"`;
	return undefined;
}

describe('the addresses the package hands to n8n', () => {
	const urls = shippedUrls();

	it('are found: the credential, both codex files, primary and credential documentation', () => {
		expect(urls.filter((u) => u.where.startsWith('credential ')).length).toBeGreaterThanOrEqual(1);
		expect(urls.filter((u) => u.where.includes('.node.json')).length).toBeGreaterThanOrEqual(4);
		expect(urls.some((u) => u.where.includes('primaryDocumentation'))).toBe(true);
		expect(urls.some((u) => u.where.includes('credentialDocumentation'))).toBe(true);
	});

	it.each(urls.map((u) => [u.where, u.url]))('%s (%s) lands on a heading', (_where, url) => {
		expect(problemOf(url)).toBeUndefined();
	});
});

describe("the README's example downloads", () => {
	it('are raw links into examples/ on the main branch, one for each example workflow', () => {
		const raw = `https://raw.githubusercontent.com/${REPOSITORY.replace('https://github.com/', '')}/main/examples/`;
		const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
		const linked = [
			...readme.matchAll(/\]\((https:\/\/raw\.githubusercontent\.com\/[^)\s]+)\)/g),
		].map((m) => m[1]);
		for (const url of linked) expect(url.startsWith(raw)).toBe(true);
		const files = fs
			.readdirSync(path.join(ROOT, 'examples'))
			.filter((file) => file.endsWith('.json'))
			.sort();
		expect(linked.map((url) => url.slice(raw.length)).sort()).toEqual(files);
	});
});

describe('the checker', () => {
	it('knows the repository from package.json', () => {
		expect(repositoryWebUrl('git+https://github.com/a-b/c.d.git')).toBe(
			'https://github.com/a-b/c.d',
		);
		expect(repositoryWebUrl('https://github.com/a/b')).toBe('https://github.com/a/b');
		expect(() => repositoryWebUrl('https://gitlab.com/a/b.git')).toThrow(/not a GitHub/);
	});

	it('refuses what does not land', () => {
		expect(problemOf('https://example.com/docs#install')).toMatch(/not an address of this/);
		expect(problemOf(`${REPOSITORY}#no-such-heading`)).toMatch(/no heading/);
		expect(problemOf(`${REPOSITORY}/blob/main/docs/missing.md#x`)).toMatch(/does not exist/);
		expect(problemOf(`${REPOSITORY}/tree/main/examples`)).toMatch(/neither the README/);
		expect(problemOf(REPOSITORY)).toMatch(/no anchor/);
		expect(problemOf(`${REPOSITORY}#install`)).toBeUndefined();
		expect(
			problemOf(`${REPOSITORY}/blob/main/docs/errors.md#errors-every-message-and-what-to-do`),
		).toBeUndefined();
	});

	it("spells anchors as GitHub does (github-slugger's rules)", () => {
		expect(githubSlug('The credential')).toBe('the-credential');
		expect(githubSlug('Lead > Create or Update')).toBe('lead--create-or-update');
		expect(githubSlug('n8n Cloud and verification')).toBe('n8n-cloud-and-verification');
		expect(githubSlug("What's new? (v2.0)")).toBe('whats-new-v20');
		expect(githubSlug('snake_case and 1,000 items')).toBe('snake_case-and-1000-items');
		expect(githubSlug('Ünïcode café')).toBe('ünïcode-café');
		expect(githubSlug('  two  spaces ')).toBe('--two--spaces-');
		expect(headingText('Installing: `npm` and [the editor](x.md) **now**')).toBe(
			'Installing: npm and the editor now',
		);
		expect([
			...anchorsOfText('# A\n## A\n```\n# not a heading\n```\n### A ##\n<a id="custom"></a>\n'),
		]).toEqual(['a', 'a-1', 'a-2', 'custom']);
	});
});
