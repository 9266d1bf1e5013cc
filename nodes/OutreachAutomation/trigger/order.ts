/**
 * The list's order (newest or oldest first): told by timestamps, learnt from which end new messages
 * appear at, or guessed for one poll only.
 */
import type { IDataObject } from 'n8n-workflow';

import type { Pages } from './pages';
import { idOf, timeOf, type ListOrder } from './state';
import { lastPage, lastPageGuess } from './walk';

/**
 * The order told by timestamps: which way most neighbours step. A majority, not the two ends, so a
 * message synced late with an older date does not turn the answer round; undefined when they tie.
 */
export function orderFromTimestamps(items: IDataObject[]): ListOrder | undefined {
	const times = items.map(timeOf).filter((t): t is number => t !== undefined);
	let steps = 0;
	for (let i = 1; i < times.length; i++) steps += Math.sign(times[i - 1] - times[i]);
	return steps > 0 ? 'newest' : steps < 0 ? 'oldest' : undefined;
}

function compareIds(a: string, b: string): number {
	// Numeric ids compare as numbers ("9" < "10"); others as plain strings (sequences, ULIDs).
	if (/^\d+$/.test(a) && /^\d+$/.test(b) && a.length !== b.length) return a.length - b.length;
	return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * A best guess, only to put a batch in order when nothing else tells (no timestamps, or all equal,
 * and no known message beside them): ids that grow with creation read ascending oldest first.
 * Otherwise newest first, as most APIs list. Never stored as the list order.
 */
export function guessOrder(items: IDataObject[]): ListOrder {
	const ids = items.map(idOf);
	const ascending =
		ids.length > 1 && ids.every((id, i) => i === 0 || compareIds(ids[i - 1], id) < 0);
	return ascending ? 'oldest' : 'newest';
}

/**
 * Learns the list order while nothing else tells it (no timestamps, or all equal). New messages join
 * the list at its newest end: the end showing an unknown message while the other shows a known one
 * is the newest. Only the ends count, as status changes under a Status filter move messages in the
 * middle; a stored order is never revisited. Returns 'idle' when both ends are as they were, and
 * undefined when neither tells (e.g. both new); 'time' when the budget ran out.
 */
export async function learnOrder(
	pages: Pages,
	seen: Set<string>,
	previousTotal: number | undefined,
): Promise<ListOrder | 'idle' | 'time' | undefined> {
	const isNew = (item: IDataObject | undefined) => item !== undefined && !seen.has(idOf(item));
	const first = await pages.get(1);
	if (!first) return 'time';
	const told = orderFromTimestamps(first.items);
	if (told) return told;
	if (first.items.length === 0) return 'idle';
	const frontIsNew = isNew(first.items[0]);
	const full = first.items.length >= pages.perPage;
	// Front known and the list no longer than before: nothing new, and no second request.
	if (
		full &&
		!frontIsNew &&
		first.total !== undefined &&
		previousTotal !== undefined &&
		first.total <= previousTotal
	)
		return 'idle';
	const lastNumber = full ? await lastPage(pages, lastPageGuess(pages, previousTotal)) : 1;
	if (lastNumber === undefined) return 'time';
	const last = (await pages.get(lastNumber))!;
	const toldByBothEnds = orderFromTimestamps([...first.items, ...last.items]);
	if (toldByBothEnds) return toldByBothEnds;
	const backIsNew = isNew(last.items[last.items.length - 1]);
	if (frontIsNew !== backIsNew) return frontIsNew ? 'newest' : 'oldest';
	return frontIsNew ? undefined : 'idle';
}
