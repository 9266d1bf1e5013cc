/**
 * The anchors GitHub gives a Markdown file's headings, by the rules of github-slugger (what github.com uses
 * for READMEs and docs): the heading's text as rendered, lower case, every character that is not a letter,
 * mark, number, connector (`_`), space or hyphen dropped, each space turned into "-"; a repeated slug gets
 * "-1", "-2"... Plus explicit `<a id>` / `<a name>` targets.
 */
import fs from 'node:fs';

/** Fenced code blocks, where a "#" line is not a heading. */
const FENCES = /^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm;

/** github-slugger's rule for one heading's text (already rendered: no Markdown syntax left). */
export function githubSlug(text: string): string {
	return text
		.toLowerCase()
		.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
		.replace(/ /g, '-');
}

/** A heading's Markdown as GitHub renders it to text: links to their text, code and emphasis unwrapped. */
export function headingText(markdown: string): string {
	return (
		markdown
			.replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
			.replace(/<[^>]+>/g, '')
			.replace(/`([^`]*)`/g, '$1')
			.replace(/(\*\*|\*)(\S(?:.*?\S)?)\1/g, '$2')
			// Underscores mark emphasis only at word edges: snake_case stays as it is.
			.replace(/(?<![\p{L}\p{N}])(__|_)(\S(?:.*?\S)?)\1(?![\p{L}\p{N}])/gu, '$2')
			.trim()
	);
}

/** Every anchor of a Markdown text, in GitHub's spelling. */
export function anchorsOfText(markdown: string): Set<string> {
	const seen = new Map<string, number>();
	const anchors = new Set<string>();
	const text = markdown.replace(FENCES, '');
	for (const [, heading] of text.matchAll(/^#{1,6}[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$/gm)) {
		const slug = githubSlug(headingText(heading));
		const count = seen.get(slug) ?? 0;
		seen.set(slug, count + 1);
		anchors.add(count ? `${slug}-${count}` : slug);
	}
	for (const [, id] of text.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(id);
	return anchors;
}

export function anchorsOf(file: string): Set<string> {
	return anchorsOfText(fs.readFileSync(file, 'utf8'));
}
