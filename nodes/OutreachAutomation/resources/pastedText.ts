/**
 * What copy-paste, scrapers and CRM exports leave around an address that no one typed as part of it:
 * invisible characters, the quotes, angle brackets or Markdown link it was written in, and the punctuation
 * of the sentence it ended. The address is cleaned of them, or, where a paste is ambiguous, refused. Never
 * a character that can belong to an address is taken away.
 */

/**
 * Characters with no width that never belong to an address: zero-width space, word joiner, byte order
 * mark, soft hyphen (shown only at a line break), and the marks that set the writing direction.
 */
const INVISIBLE = /[\u00AD\u200B\u200E\u200F\u2060\uFEFF\u202A-\u202E\u2066-\u2069]/g;
/**
 * The zero-width (non-)joiners shape letters of some scripts (Persian, Indic), so only where no such
 * letter is on both sides: next to ASCII or at an edge, they are debris.
 */
const STRAY_JOINER = /(^|[ -~])[\u200C\u200D]+|[\u200C\u200D]+(?=[ -~]|$)/g;

/** Pairs an address is quoted in: `<…>` (e-mail, Markdown autolinks), quotes of many languages, code. */
const QUOTES: Array<[string, string]> = [
	['<', '>'],
	['"', '"'],
	["'", "'"],
	['`', '`'],
	['\u201C', '\u201D'],
	['\u201E', '\u201C'],
	['\u2018', '\u2019'],
	['\u00AB', '\u00BB'],
	['\u2039', '\u203A'],
	['(', ')'],
	['[', ']'],
	['*', '*'],
];

/** Opening marks an address never starts with, left by a paste that missed the closing one. */
const LEADING = /^[<"'`*\u201C\u201E\u2018\u00AB\u2039([{]+/;
/** Sentence punctuation and closing quotes an address as written in text never ends with. */
const TRAILING =
	/[.,;:!?"'`*\u201D\u2019\u00BB\u203A\u2026\u3001\u3002\uFF0C\uFF0E\uFF1A\uFF1B\uFF01\uFF1F]$/;
const CLOSING: Record<string, string> = { ')': '(', ']': '[', '}': '{', '>': '<' };
const DEBRIS_HINT =
	/[\u00AD\u200B-\u200F\u2060\uFEFF\u202A-\u202E\u2066-\u2069]|^\s*[^\sa-z0-9/]|[^\sa-z0-9/_=&%#-]\s*$/i;
/** `[text](address)`: a Markdown link, written whole. */
const MARKDOWN_LINK = /^\[([^\]]*)\]\(\s*<?\s*([^\s<>]+?)\s*>?\s*\)$/;

/** The text without its invisible characters. */
export function withoutInvisible(text: string): string {
	return text.replace(INVISIBLE, '').replace(STRAY_JOINER, '$1');
}

function count(text: string, char: string): number {
	let n = 0;
	for (const c of text) if (c === char) n++;
	return n;
}

/** Drops the closing punctuation of the sentence around it; a closing bracket only if unbalanced. */
function withoutTrailing(text: string): string {
	for (;;) {
		const last = text.slice(-1);
		const opening = CLOSING[last];
		if (TRAILING.test(text) || (opening && count(text, last) > count(text, opening)))
			text = text.slice(0, -1);
		else return text;
	}
}

function unquoted(text: string): string {
	for (;;) {
		const pair = QUOTES.find(
			([open, close]) => text.length > 2 && text.startsWith(open) && text.endsWith(close),
		);
		if (!pair) return text;
		text = text.slice(pair[0].length, -pair[1].length).trim();
	}
}

/** What a paste of one address gives: the address, and the text of the Markdown link it was in. */
export interface Pasted {
	address: string;
	/** A Markdown link's text, when the address came as `[text](address)`. */
	label?: string;
}

/**
 * The address inside what was pasted, the debris around it taken away (layer by layer: a quoted Markdown
 * link followed by a full stop is three layers).
 */
export function pastedAddress(raw: string): Pasted {
	// Most addresses carry none of it: they begin with a letter, a digit or "/", end with one (or "/",
	// "_", "-", "=", "&", "%", "#") and hold no invisible character.
	if (!DEBRIS_HINT.test(raw)) return { address: raw.trim() };
	let text = withoutInvisible(raw).trim();
	for (let layer = 0; layer < 8; layer++) {
		const before = text;
		text = withoutTrailing(unquoted(text));
		const link = MARKDOWN_LINK.exec(text);
		if (link) return { address: pastedAddress(link[2]).address, label: link[1].trim() };
		text = text.replace(LEADING, '').trim();
		if (text === before) break;
	}
	return { address: text };
}
