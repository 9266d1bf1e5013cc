import type { IDataObject, IPollFunctions } from 'n8n-workflow';

import { MAX_PAGE_SIZE } from '../transport/constants';
import { PageWalker } from '../transport/pages';

/** How many known ids the trigger remembers; see README "Trigger" for why this is enough. */
export const MAX_REMEMBERED_IDS = 1000;

export type ListOrder = 'newest' | 'oldest';

/** The trigger's memory, kept in the workflow's static data (small JSON, bounded). */
export interface TriggerState {
	/** Which filters this state belongs to: changing them starts afresh. */
	filterKey?: string;
	/** The API's list order, once the data has shown it (never a guess). */
	order?: ListOrder;
	/** `meta.total` and `meta.per_page` at the last poll: where the last page is. */
	total?: number;
	perPage?: number;
	/** Newest `created_at` seen, when messages have timestamps. */
	watermark?: string;
	/** Ids known (emitted or noted), newest first, at most MAX_REMEMBERED_IDS. */
	seen?: string[];
}

export interface PollResult {
	/** New messages, oldest first. */
	emit: IDataObject[];
	state: TriggerState;
}

interface Listing {
	items: IDataObject[];
	total: number;
	perPage: number;
	/** The walker's verdict: no page follows. */
	last: boolean;
}

const idOf = (item: IDataObject) => String(item.id);
const timeOf = (item: IDataObject) =>
	typeof item.created_at === 'string' && !Number.isNaN(Date.parse(item.created_at))
		? Date.parse(item.created_at)
		: undefined;
const reversed = (items: IDataObject[]) => [...items].reverse();
const pageCount = (listing: Listing) => Math.max(1, Math.ceil(listing.total / listing.perPage));

/**
 * The message list as one poll reads it, through the page walker (each page requested at most once,
 * the page size the server really uses, a server ignoring `page` reported), within n8n's poll budget.
 */
class Pages {
	private readonly walker: PageWalker;

	perPage = MAX_PAGE_SIZE;

	total = 0;

	/** Set when n8n's poll budget ran out before a page was read: this poll's result must be dropped. */
	outOfTime = false;

	constructor(
		ctx: IPollFunctions,
		qs: IDataObject,
		private readonly budgetEnds?: number,
	) {
		this.walker = new PageWalker(
			ctx,
			{ method: 'GET', path: '/messages', qs, resource: 'Message' },
			{ advice: 'Nothing was emitted; the next poll tries again.' },
		);
	}

	async get(number: number): Promise<Listing> {
		if (!this.walker.has(number)) {
			// The first request always goes out; later ones only while the budget lasts. Past it, pages
			// read as empty so every loop ends at once, and the caller drops the result.
			const late = this.budgetEnds !== undefined && Date.now() > this.budgetEnds;
			if (this.outOfTime || (this.walker.requests > 0 && late)) {
				this.outOfTime = true;
				return { items: [], total: this.total, perPage: this.perPage, last: true };
			}
			const page = await this.walker.page(number);
			this.perPage = page.perPage;
			this.total = page.total ?? page.items.length;
		}
		const page = await this.walker.page(number);
		return {
			items: page.items,
			total: page.total ?? page.items.length,
			perPage: page.perPage,
			last: page.last,
		};
	}
}

/**
 * The order told by timestamps: which way most neighbours step. A majority, not the two ends, so a
 * message synced late with an older date does not turn the answer round; undefined when they tie.
 */
function orderFromTimestamps(items: IDataObject[]): ListOrder | undefined {
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
function guessOrder(items: IDataObject[]): ListOrder {
	const ids = items.map(idOf);
	const ascending =
		ids.length > 1 && ids.every((id, i) => i === 0 || compareIds(ids[i - 1], id) < 0);
	return ascending ? 'oldest' : 'newest';
}

/** The state after these items (newest first) became known. */
function remember(state: TriggerState, newestFirst: IDataObject[], pages: Pages): TriggerState {
	const seen = [...new Set([...newestFirst.map(idOf), ...(state.seen ?? [])])].slice(
		0,
		MAX_REMEMBERED_IDS,
	);
	let watermark = state.watermark;
	for (const item of newestFirst) {
		const time = timeOf(item);
		if (time !== undefined && (watermark === undefined || time > Date.parse(watermark))) {
			watermark = new Date(time).toISOString();
		}
	}
	return { ...state, seen, watermark, total: pages.total, perPage: pages.perPage };
}

/** Both ends of a list whose order is unknown, so the boundary is remembered whichever end is newest. */
function bothEnds(items: IDataObject[]): IDataObject[] {
	if (items.length <= MAX_REMEMBERED_IDS) return items;
	const half = MAX_REMEMBERED_IDS / 2;
	return [...items.slice(0, half), ...items.slice(-half)];
}

/** First activation: note where the list stands (both ends while its order is not known). */
async function initialState(pages: Pages, filterKey: string): Promise<PollResult> {
	const first = await pages.get(1);
	const order = orderFromTimestamps(first.items);
	const lastPage = pageCount(first);
	let known: IDataObject[];
	if (lastPage <= 1) known = order === 'oldest' ? reversed(first.items) : first.items;
	else if (order === 'newest') known = first.items;
	else {
		const last = await pages.get(lastPage);
		known = order === 'oldest' ? reversed(last.items) : [...reversed(last.items), ...first.items];
	}
	return { emit: [], state: remember({ filterKey, order }, known, pages) };
}

/** First activation with "emit existing": the whole list, once, oldest first. */
async function emitEverything(pages: Pages, filterKey: string): Promise<PollResult> {
	const all: IDataObject[] = [];
	const taken = new Set<string>();
	for (let page = 1; ; page++) {
		const listing = await pages.get(page);
		for (const item of listing.items) {
			// Messages arriving meanwhile push a newest-first list down: the same one may show up twice.
			if (taken.has(idOf(item))) continue;
			taken.add(idOf(item));
			all.push(item);
		}
		if (listing.last) break;
	}
	const order = orderFromTimestamps(all);
	const newestFirst = (order ?? guessOrder(all)) === 'oldest' ? reversed(all) : all;
	return {
		emit: reversed(newestFirst),
		state: remember({ filterKey, order }, order ? newestFirst : bothEnds(newestFirst), pages),
	};
}

/** The list's pages in newest-first order, each page's items newest first. */
async function* newestFirstPages(
	pages: Pages,
	order: ListOrder,
	guessPage: number,
): AsyncGenerator<IDataObject[]> {
	if (order === 'newest') {
		for (let page = 1; ; page++) {
			const listing = await pages.get(page);
			yield listing.items;
			if (listing.last) return;
		}
	}
	// Oldest first: the newest messages are on the last page. Ask for the page that was last at the
	// previous poll (when nothing is new, the only request), learn the current last page, walk back.
	const probe = await pages.get(guessPage);
	for (let page = pageCount(probe); page >= 1; page--)
		yield reversed((await pages.get(page)).items);
}

interface Scan {
	/** Messages not known, newest first, each once. */
	fresh: IDataObject[];
	/** Whether the scan ended on a remembered message (rather than at the end of the list). */
	reachedSeen: boolean;
}

/**
 * Reads from the newest end until a remembered id. With timestamps, a full page's worth of
 * messages older than the watermark in a row also ends it: the remembered ones have left the list
 * (e.g. their status changed under a Status filter) and everything further is older still.
 */
async function scanNewestFirst(
	pages: Pages,
	order: ListOrder,
	guessPage: number,
	seen: Set<string>,
	isOld: (item: IDataObject) => boolean,
): Promise<Scan> {
	const fresh: IDataObject[] = [];
	const taken = new Set<string>();
	let oldInARow = 0;
	for await (const items of newestFirstPages(pages, order, guessPage)) {
		for (const item of items) {
			const id = idOf(item);
			if (seen.has(id)) return { fresh, reachedSeen: true };
			// New messages arriving mid-poll push a newest-first list down: the same one twice.
			if (taken.has(id)) continue;
			taken.add(id);
			fresh.push(item);
			oldInARow = isOld(item) ? oldInARow + 1 : 0;
			if (oldInARow >= pages.perPage) return { fresh, reachedSeen: false };
		}
	}
	return { fresh, reachedSeen: false };
}

/**
 * Learns the list order while nothing else tells it (no timestamps, or all equal). New messages join
 * the list at its newest end: the end showing an unknown message while the other shows a known one
 * is the newest. Only the ends count, as status changes under a Status filter move messages in the
 * middle; a stored order is never revisited. Returns 'idle' when both ends are as they were, and
 * undefined when neither tells (e.g. both new).
 */
async function learnOrder(
	pages: Pages,
	seen: Set<string>,
	previousTotal: number,
): Promise<ListOrder | 'idle' | undefined> {
	const isNew = (item: IDataObject | undefined) => item !== undefined && !seen.has(idOf(item));
	const first = await pages.get(1);
	const told = orderFromTimestamps(first.items);
	if (told) return told;
	const frontIsNew = isNew(first.items[0]);
	const multiPage = pageCount(first) > 1;
	// Front known and the list no longer than before: nothing new, and no second request.
	if (multiPage && !frontIsNew && first.total <= previousTotal) return 'idle';
	const last = multiPage ? await pages.get(pageCount(first)) : first;
	const toldByBothEnds = orderFromTimestamps([...first.items, ...last.items]);
	if (toldByBothEnds) return toldByBothEnds;
	const backIsNew = isNew(last.items[last.items.length - 1]);
	if (frontIsNew !== backIsNew) return frontIsNew ? 'newest' : 'oldest';
	return frontIsNew ? undefined : 'idle';
}

async function newSinceLastPoll(pages: Pages, state: TriggerState): Promise<PollResult> {
	const seen = new Set(state.seen ?? []);
	const watermark = state.watermark !== undefined ? Date.parse(state.watermark) : undefined;
	const isOld = (item: IDataObject) => {
		const time = timeOf(item);
		return watermark !== undefined && time !== undefined && time < watermark;
	};

	let order = state.order;
	if (!order) {
		const learned = await learnOrder(pages, seen, state.total ?? 0);
		if (learned === 'idle') return { emit: [], state };
		order = learned;
	}
	// Still unknown (one page of only new messages, or no clue at either end): read it in the
	// likeliest order for this poll only; the stored order waits for evidence.
	const scanOrder = order ?? guessOrder((await pages.get(1)).items);
	const guessPage = Math.max(1, Math.ceil((state.total ?? 0) / (state.perPage ?? MAX_PAGE_SIZE)));
	const { fresh, reachedSeen } = await scanNewestFirst(pages, scanOrder, guessPage, seen, isOld);

	// Listed before a remembered message, a message is new whatever its date (e.g. a reply synced
	// late with its original time). Without that anchor only the date can tell: older ones are
	// noted as known, not emitted.
	const newestFirst = reachedSeen ? fresh : fresh.filter((item) => !isOld(item));
	return { emit: reversed(newestFirst), state: remember({ ...state, order }, fresh, pages) };
}

/**
 * One poll: every message not emitted before, oldest first. Costs one request when nothing is new.
 * With `emitExisting`, the first poll emits what is already there instead of only taking note.
 * A failed page throws, and running out of n8n's poll budget emits nothing: either way `previous`
 * stays as it was and nothing is skipped.
 */
export async function pollNewMessages(
	ctx: IPollFunctions,
	qs: IDataObject,
	filterKey: string,
	previous: TriggerState,
	emitExisting: boolean,
	budgetEnds?: number,
): Promise<PollResult> {
	const pages = new Pages(ctx, qs, budgetEnds);
	let result: PollResult;
	if (previous.filterKey !== filterKey) {
		result = emitExisting
			? await emitEverything(pages, filterKey)
			: await initialState(pages, filterKey);
	} else {
		result = await newSinceLastPoll(pages, previous);
	}
	// Out of time before every page was read: emit nothing, keep the memory; the next poll reads again.
	return pages.outOfTime ? { emit: [], state: previous } : result;
}

/** Manual "Fetch Test Event": the newest matching message, state untouched. */
export async function newestMessage(
	ctx: IPollFunctions,
	qs: IDataObject,
	state: TriggerState,
): Promise<IDataObject | undefined> {
	const pages = new Pages(ctx, qs);
	const first = await pages.get(1);
	const order = state.order ?? orderFromTimestamps(first.items) ?? guessOrder(first.items);
	if (order === 'newest') return first.items[0];
	const last = await pages.get(pageCount(first));
	return last.items[last.items.length - 1];
}
