import type { IDataObject, IPollFunctions } from 'n8n-workflow';

import { MAX_PAGE_SIZE } from './constants';
import { apiRequest } from './request';

/** How many emitted ids the trigger remembers; see README "Trigger" for why this is enough. */
export const MAX_REMEMBERED_IDS = 1000;

export type ListOrder = 'newest' | 'oldest';

/** The trigger's memory, kept in the workflow's static data (small JSON, bounded). */
export interface TriggerState {
	/** Which filters this state belongs to: changing them starts afresh. */
	filterKey?: string;
	/** The API's list order, once it is known. */
	order?: ListOrder;
	/** `meta.total` and `meta.per_page` at the last poll: where the last page is. */
	total?: number;
	perPage?: number;
	/** Newest `created_at` seen, when messages have timestamps. */
	watermark?: string;
	/** Ids known, newest first, at most MAX_REMEMBERED_IDS. */
	seen?: string[];
}

interface Listing {
	items: IDataObject[];
	total: number;
	perPage: number;
}

const idOf = (item: IDataObject) => String(item.id);
const timeOf = (item: IDataObject) =>
	typeof item.created_at === 'string' && !Number.isNaN(Date.parse(item.created_at))
		? Date.parse(item.created_at)
		: undefined;

async function listPage(ctx: IPollFunctions, qs: IDataObject, page: number): Promise<Listing> {
	const { data, meta } = await apiRequest(ctx, {
		method: 'GET',
		path: '/messages',
		qs: { ...qs, page, per_page: MAX_PAGE_SIZE },
		resource: 'Message',
	});
	const items = (Array.isArray(data) ? data : []) as IDataObject[];
	const perPage = typeof meta?.per_page === 'number' && meta.per_page > 0 ? meta.per_page : MAX_PAGE_SIZE;
	const total = typeof meta?.total === 'number' ? meta.total : items.length;
	return { items, total, perPage };
}

/** The order told by timestamps inside one page, if they differ. */
function orderFromTimestamps(items: IDataObject[]): ListOrder | undefined {
	const times = items.map(timeOf).filter((t): t is number => t !== undefined);
	if (times.length < 2 || times[0] === times[times.length - 1]) return undefined;
	return times[0] > times[times.length - 1] ? 'newest' : 'oldest';
}

/** Where unknown ids sit in a page whose other ids are known: at the front means newest first. */
function orderFromNewIds(items: IDataObject[], known: Set<string>): ListOrder | undefined {
	const flags = items.map((item) => !known.has(idOf(item)));
	const firstNew = flags.indexOf(true);
	const firstKnown = flags.indexOf(false);
	if (firstNew === -1 || firstKnown === -1) return undefined;
	return firstNew < firstKnown ? 'newest' : 'oldest';
}

/**
 * Reads the list from its newest end, newest first, until `stop` says an item is already known,
 * or the list ends. Pages are read in full before anything is returned, so a failed page throws
 * and the caller's state is left as it was.
 */
async function readFromNewestEnd(
	ctx: IPollFunctions,
	qs: IDataObject,
	order: ListOrder,
	guess: { total: number; perPage: number },
	stop: (item: IDataObject) => boolean,
	budgetEnds: number | undefined,
): Promise<{ fresh: IDataObject[]; total: number; complete: boolean }> {
	const fresh: IDataObject[] = [];
	const out = () => budgetEnds !== undefined && Date.now() > budgetEnds;

	if (order === 'newest') {
		for (let page = 1; ; page++) {
			const listing = await listPage(ctx, qs, page);
			for (const item of listing.items) {
				if (stop(item)) return { fresh, total: listing.total, complete: true };
				fresh.push(item);
			}
			const end = listing.items.length < listing.perPage || page * listing.perPage >= listing.total;
			if (end) return { fresh, total: listing.total, complete: true };
			if (out()) return { fresh, total: listing.total, complete: false };
		}
	}

	// Oldest first: the newest items are on the last page. Start where the last page was, read on
	// to the current last page, then go back page by page until a known item.
	let page = Math.max(1, Math.ceil(guess.total / guess.perPage));
	let listing = await listPage(ctx, qs, page);
	const pages = new Map<number, IDataObject[]>([[page, listing.items]]);
	const lastPage = Math.max(1, Math.ceil(listing.total / listing.perPage));
	const total = listing.total;
	for (let next = page + 1; next <= lastPage; next++) {
		if (out()) return { fresh: [], total, complete: false };
		listing = await listPage(ctx, qs, next);
		pages.set(next, listing.items);
	}
	for (page = lastPage; page >= 1; page--) {
		if (!pages.has(page)) {
			if (out()) return { fresh, total, complete: false };
			pages.set(page, (await listPage(ctx, qs, page)).items);
		}
		const items = pages.get(page) ?? [];
		for (let i = items.length - 1; i >= 0; i--) {
			if (stop(items[i])) return { fresh, total, complete: true };
			fresh.push(items[i]);
		}
	}
	return { fresh, total, complete: true };
}

const reversed = (items: IDataObject[]) => [...items].reverse();

/** The state after these items (newest first) became known. */
function remember(
	state: TriggerState,
	newestFirst: IDataObject[],
	total: number,
	perPage = state.perPage ?? MAX_PAGE_SIZE,
): TriggerState {
	const seen = [...newestFirst.map(idOf), ...(state.seen ?? [])];
	const unique = [...new Set(seen)].slice(0, MAX_REMEMBERED_IDS);
	let watermark = state.watermark;
	for (const item of newestFirst) {
		const time = timeOf(item);
		if (time !== undefined && (watermark === undefined || time > Date.parse(watermark))) {
			watermark = new Date(time).toISOString();
		}
	}
	return { ...state, seen: unique, total, perPage, watermark };
}

/** First activation: note where the list stands (both ends while its order is not known). */
async function initialState(ctx: IPollFunctions, qs: IDataObject, filterKey: string): Promise<TriggerState> {
	const first = await listPage(ctx, qs, 1);
	const order = orderFromTimestamps(first.items);
	const lastPage = Math.ceil(first.total / first.perPage);
	let newestFirst: IDataObject[];
	if (lastPage <= 1) newestFirst = order === 'oldest' ? reversed(first.items) : first.items;
	else if (order === 'newest') newestFirst = first.items;
	else {
		const last = await listPage(ctx, qs, lastPage);
		newestFirst = order === 'oldest' ? reversed(last.items) : [...reversed(last.items), ...first.items];
	}
	return remember({ filterKey, order }, newestFirst, first.total, first.perPage);
}

/** First activation with "emit existing": the whole list, once, oldest first. */
async function everything(ctx: IPollFunctions, qs: IDataObject, filterKey: string): Promise<PollResult> {
	const all: IDataObject[] = [];
	let listing: Listing;
	let page = 1;
	do {
		listing = await listPage(ctx, qs, page++);
		all.push(...listing.items);
	} while (listing.items.length >= listing.perPage && all.length < listing.total);
	const order = orderFromTimestamps(all);
	const newestFirst = order === 'oldest' ? reversed(all) : all;
	return {
		emit: reversed(newestFirst),
		state: remember({ filterKey, order }, newestFirst, listing.total, listing.perPage),
	};
}

export interface PollResult {
	/** New messages, oldest first. */
	emit: IDataObject[];
	state: TriggerState;
}

/**
 * One poll: every message not emitted before, oldest first. Costs one request when nothing is new.
 * With `emitExisting`, the first poll emits what is already there instead of only taking note.
 */
export async function pollNewMessages(
	ctx: IPollFunctions,
	qs: IDataObject,
	filterKey: string,
	previous: TriggerState,
	emitExisting: boolean,
	budgetEnds?: number,
): Promise<PollResult> {
	if (previous.filterKey !== filterKey) {
		if (!emitExisting) return { emit: [], state: await initialState(ctx, qs, filterKey) };
		return await everything(ctx, qs, filterKey);
	}
	const state = previous;
	const known = new Set(state.seen ?? []);
	const watermark = state.watermark !== undefined ? Date.parse(state.watermark) : undefined;
	const isKnown = (item: IDataObject) => {
		if (known.has(idOf(item))) return true;
		const time = timeOf(item);
		return watermark !== undefined && time !== undefined && time < watermark;
	};

	let order = state.order;
	if (!order) {
		// Undetermined order: page 1 tells it when it holds new ids next to known ones, or when
		// the total grew while page 1 stayed known (new items went to the end).
		const first = await listPage(ctx, qs, 1);
		order = orderFromTimestamps(first.items) ?? orderFromNewIds(first.items, known);
		if (!order && first.total > first.perPage) {
			const allKnown = first.items.every(isKnown);
			// All of page 1 new: they came to the front. Page 1 unchanged but more items: at the end.
			if (!allKnown) order = 'newest';
			else if (first.total > (state.total ?? 0)) order = 'oldest';
		}
		if (!order) {
			// One page, all new or all known, no timestamps to tell: take it as it stands.
			const fresh = first.items.filter((item) => !isKnown(item));
			return { emit: fresh, state: remember(state, reversed(fresh), first.total, first.perPage) };
		}
	}

	const guess = { total: state.total ?? 0, perPage: state.perPage ?? MAX_PAGE_SIZE };
	const result = await readFromNewestEnd(ctx, qs, order, guess, isKnown, budgetEnds);
	if (!result.complete) return { emit: [], state: { ...state, order } };
	return { emit: reversed(result.fresh), state: remember({ ...state, order }, result.fresh, result.total) };
}

/** Manual "Fetch Test Event": the newest matching message, state untouched. */
export async function newestMessage(
	ctx: IPollFunctions,
	qs: IDataObject,
	state: TriggerState,
): Promise<IDataObject | undefined> {
	const first = await listPage(ctx, qs, 1);
	const order = state.order ?? orderFromTimestamps(first.items) ?? 'newest';
	if (order === 'newest' || first.total <= first.perPage) {
		return order === 'newest' ? first.items[0] : first.items[first.items.length - 1];
	}
	const last = await listPage(ctx, qs, Math.ceil(first.total / first.perPage));
	return last.items[last.items.length - 1];
}
