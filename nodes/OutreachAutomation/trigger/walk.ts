/**
 * Reading the list while it shifts under the poll: finding its last page, and walking from a page
 * towards its oldest end without skipping what moved between two reads.
 */
import type { IDataObject } from 'n8n-workflow';

import type { Pages } from './pages';
import { idOf, reversed, type ListOrder } from './state';

/**
 * The number of the last non-empty page, starting from a guess: the total when there is one, then
 * checked against the pages themselves (a total may be missing, wrong or a string). Undefined when
 * the budget ran out.
 */
export async function lastPage(pages: Pages, guess: number): Promise<number | undefined> {
	let number = Math.max(1, guess);
	const tried = new Set<number>();
	for (;;) {
		tried.add(number);
		const page = await pages.get(number);
		if (!page) return undefined;
		const total = pages.total;
		const size = page.items.length;
		if (size === 0) {
			if (number === 1) break;
			// Past the end: where the total puts it, else half-way back.
			const target = total !== undefined ? Math.max(1, Math.ceil(total / pages.perPage)) : 0;
			number =
				target > 0 && target < number && !tried.has(target) ? target : Math.floor(number / 2);
			continue;
		}
		const reached = (number - 1) * pages.perPage + size;
		// A total that agrees with this page ends the search without asking for an empty page.
		if (total !== undefined && reached >= total) break;
		const target = total !== undefined ? Math.ceil(total / pages.perPage) : 0;
		const next = target > number && !tried.has(target) ? target : number + 1;
		const after = await pages.get(next);
		if (!after) return undefined;
		if (after.items.length === 0) {
			if (next === number + 1) break;
			tried.add(next);
			number++;
			continue;
		}
		// A page after a short one: the short one was a silent clamp, not the end.
		if (size < pages.perPage && next === number + 1) pages.perPage = size;
		number = next;
	}
	pages.estimate = (number - 1) * pages.perPage + ((await pages.get(number))?.items.length ?? 0);
	return number;
}

/** Where the last page probably is, from what the previous poll saw. */
export function lastPageGuess(pages: Pages, total?: number): number {
	const t = pages.total ?? pages.estimate ?? total;
	return t === undefined ? 1 : Math.max(1, Math.ceil(t / pages.perPage));
}

type Verdict = 'take' | 'skip' | 'stop';

interface WalkEnd {
	/** How the walk ended: at a stop, at the end of the list, or out of time. */
	end: 'stop' | 'end' | 'time';
	/** The last page read completely and its items, for the anchor of a drain. */
	lastPage?: number;
	lastItems?: IDataObject[];
}

/**
 * Reads the list from page `start` towards its oldest end, page after page, showing each item to
 * `visit` newest first. Reading newest-first pages forwards, an item leaving the list above moves
 * the next ones onto the page just read: when the total dropped (or is not given), that page is
 * read again before going on, so nothing that stayed in the list is skipped. Reading oldest-first
 * pages backwards, items only ever move onto pages still to read.
 */
export async function walk(
	pages: Pages,
	order: ListOrder,
	start: number,
	visit: (item: IDataObject) => Verdict,
	known?: number,
): Promise<WalkEnd> {
	let lastPageRead: number | undefined;
	let lastItems: IDataObject[] | undefined;
	let previousTotal: number | undefined;
	let previousSeq = 0;
	for (let number = start; number >= 1; number += order === 'newest' ? 1 : -1) {
		// A page read before the previous one (while looking for the end) is read again: the list
		// may have shifted between the two reads, past what the walk's own order guards against.
		let page = await pages.get(number, previousSeq);
		if (!page && endsOn(pages, order, number, known) && pages.stretch()) {
			page = await pages.get(number, previousSeq);
		}
		if (!page) return { end: 'time', lastPage: lastPageRead, lastItems };
		if (page.items.length === 0) return { end: 'end', lastPage: lastPageRead, lastItems };
		if (order === 'newest' && lastPageRead !== undefined) {
			// The list shrank between the two reads: what moved up onto the page before is read there
			// again. If that second read shows the list moved down again (this page's first item is
			// not on it), what was skipped may be back on this page: it is read again too (a few
			// rounds at most; only with a total, which tells when to start).
			let before = previousTotal;
			let settled = false;
			let anchor = lastItems;
			for (let round = 0; round < 3 && !settled; round++) {
				const dropped = page.total === undefined || before === undefined || page.total < before;
				if (!dropped) {
					settled = true;
					break;
				}
				const again = await pages.reread(lastPageRead);
				if (!again) return { end: 'time', lastPage: lastPageRead, lastItems };
				for (const item of again.items) if (visit(item) === 'stop') return { end: 'stop' };
				anchor = again.items;
				// Without the first item of this page on it, the list moved down again in between.
				const first = page.items[0];
				const moved = first !== undefined && !again.items.some((i) => idOf(i) === idOf(first));
				if (again.total === undefined || page.total === undefined || !moved) {
					settled = true;
					break;
				}
				const next = await pages.reread(number);
				if (!next) return { end: 'time', lastPage: lastPageRead, lastItems: again.items };
				before = again.total;
				page = next;
			}
			// Still moving after the rounds: going on could pass what moved. The walk ends where it is
			// sure, as when its time runs out, and the next poll goes on from there.
			if (!settled) return { end: 'time', lastPage: lastPageRead, lastItems: anchor };
		}
		previousTotal = page.total;
		previousSeq = page.seq ?? 0;
		const items = order === 'newest' ? page.items : reversed(page.items);
		for (const item of items) if (visit(item) === 'stop') return { end: 'stop' };
		lastPageRead = number;
		lastItems = page.items;
		// A total that agrees with the pages read marks the end without asking for an empty page.
		const reached = (number - 1) * pages.perPage + page.items.length;
		if (order === 'newest' && page.total !== undefined && reached >= page.total)
			return { end: 'end', lastPage: lastPageRead, lastItems };
	}
	return { end: 'end', lastPage: lastPageRead, lastItems };
}

/**
 * Whether page `number` probably holds the end of a drain: the newest of the `known` messages that
 * were in the list before it began (they sit at its oldest end). An estimate (messages may have left
 * the list since); it only decides whether one more page is read past the budget.
 */
function endsOn(pages: Pages, order: ListOrder, number: number, known?: number): boolean {
	if (known === undefined || pages.total === undefined) return false;
	const first = (number - 1) * pages.perPage;
	return order === 'newest' ? pages.total - known < first + pages.perPage : first < known;
}
