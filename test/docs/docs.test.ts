/**
 * The user's documentation holds together: every relative link and picture in README.md and docs/*.md points
 * at a file that exists (and, for a link into a Markdown file, at a heading that exists there), and the
 * README stays a guide a user reads to the end: at most 250 lines.
 */
import fs from 'node:fs';
import path from 'node:path';

import {
	ASSUMED_RATE_LIMIT,
	MAX_SINGLE_WAIT_MS,
	RATE_LIMIT_MAX_RETRIES,
	RATE_LIMIT_MAX_TOTAL_WAIT_MS,
	SERVER_ERROR_MAX_RETRIES,
} from '../../nodes/OutreachAutomation/transport/constants';
import { anchorsOf } from './anchors';

const ROOT = path.resolve(__dirname, '..', '..');
const README_MAX_LINES = 250;

const DOCS = [
	'README.md',
	...fs
		.readdirSync(path.join(ROOT, 'docs'))
		.filter((file) => file.endsWith('.md'))
		.sort()
		.map((file) => `docs/${file}`),
];

/** The Markdown without fenced code blocks and inline code, where brackets are not links. */
function prose(markdown: string): string {
	return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '');
}

interface Link {
	file: string;
	line: number;
	target: string;
	image: boolean;
}

/** Every inline link and image: `[text](target)`, `![alt](target)`, with an optional "title". */
function linksOf(file: string): Link[] {
	const lines = prose(fs.readFileSync(path.join(ROOT, file), 'utf8')).split('\n');
	const links: Link[] = [];
	lines.forEach((text, index) => {
		for (const match of text.matchAll(
			/(!?)\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g,
		))
			links.push({ file, line: index + 1, target: match[2], image: match[1] === '!' });
	});
	return links;
}

const isExternal = (target: string) => /^[a-z][a-z0-9+.-]*:/i.test(target);

/** What is wrong with one link, or undefined when it resolves. */
function problemOf(link: Link): string | undefined {
	const [rawPath, anchor] = link.target.split('#', 2) as [string, string | undefined];
	const target = rawPath
		? path.resolve(path.dirname(path.join(ROOT, link.file)), decodeURIComponent(rawPath))
		: path.join(ROOT, link.file);
	if (!target.startsWith(ROOT + path.sep) && target !== ROOT)
		return 'points outside the repository';
	if (!fs.existsSync(target)) return 'no such file';
	if (link.image && !/\.(png|jpe?g|gif|svg|webp)$/i.test(target))
		return 'an image that is not a picture';
	if (
		anchor !== undefined &&
		target.endsWith('.md') &&
		!anchorsOf(target).has(anchor.toLowerCase())
	)
		return `no heading with the anchor "#${anchor}"`;
	return undefined;
}

describe('the documentation', () => {
	it.each(DOCS)('%s: every relative link and picture resolves, anchors included', (file) => {
		const broken = linksOf(file)
			.filter((link) => !isExternal(link.target))
			.map((link) => ({ link, problem: problemOf(link) }))
			.filter(({ problem }) => problem)
			.map(({ link, problem }) => `${link.file}:${link.line} ${link.target}: ${problem}`);
		expect(broken).toEqual([]);
	});

	it(`README.md is at most ${README_MAX_LINES} lines`, () => {
		const text = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
		const lines = text.endsWith('\n') ? text.split('\n').length - 1 : text.split('\n').length;
		expect(lines).toBeLessThanOrEqual(README_MAX_LINES);
	});

	it('the checker finds what it checks: links, pictures and anchors in README.md', () => {
		const links = linksOf('README.md');
		expect(links.some((link) => link.image)).toBe(true);
		expect(links.some((link) => link.target.includes('#'))).toBe(true);
		expect(problemOf({ file: 'README.md', line: 0, target: 'docs/missing.md', image: false })).toBe(
			'no such file',
		);
		expect(
			problemOf({ file: 'README.md', line: 0, target: '#no-such-heading', image: false }),
		).toMatch(/no heading/);
		expect(
			problemOf({ file: 'README.md', line: 0, target: '#install', image: false }),
		).toBeUndefined();
	});

	it("states the code's figures and n8n 2.x's words, nothing else", () => {
		const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');
		const readme = read('README.md');
		const userDocs = ['README.md', 'docs/errors.md', 'docs/rate-limits.md', 'CHANGELOG.md'].map(
			(file) => ({ file, text: read(file) }),
		);
		// A request answered 429 is sent at most RATE_LIMIT_MAX_RETRIES times more: that many tries plus one.
		const tries = RATE_LIMIT_MAX_RETRIES + 1;
		expect(readme).toContain(
			`for ${tries} tries or ${RATE_LIMIT_MAX_TOTAL_WAIT_MS / 60_000} minutes`,
		);
		expect(readme).toContain(`${tries} tries or 5 minutes of 429s`);
		expect(readme).toContain(`more than ${MAX_SINGLE_WAIT_MS / 60_000} minutes away`);
		expect(readme).toContain(`**${ASSUMED_RATE_LIMIT} requests per minute per API key**`);
		expect(readme).toContain(`tried ${SERVER_ERROR_MAX_RETRIES + 1} times for reads and Update`);
		expect(read('docs/errors.md')).toContain(
			`reads are tried ${SERVER_ERROR_MAX_RETRIES + 1} times`,
		);
		expect(read('docs/rate-limits.md')).toContain(`after ${tries} tries answered 429 in a row`);
		// n8n 2.41.1's editor: node Settings → On Error → Continue; Publish/Unpublish; … → Import → From file.
		for (const { file, text } of userDocs) {
			expect({ file, found: text.match(/Continue On Fail|Import from File|\b6 tries\b/g) }).toEqual(
				{
					file,
					found: null,
				},
			);
		}
		expect(readme).toContain('On Error → Continue');
		expect(readme).toContain('**Import** → **From file**');
	});
});
