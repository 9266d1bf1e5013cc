import type { IDataObject, IPollFunctions } from 'n8n-workflow';

import { MAX_PAGE_SIZE } from '../transport/constants';
import { pagingIgnoredError } from '../transport/errors';
import { PageWalker } from '../transport/pages';

/** How many known ids the trigger remembers; see README "Trigger" for why this is enough. */
export const MAX_REMEMBERED_IDS = 1000;

/** Ids kept to mark where an unfinished drain must stop (the newest known before it began). */
export const MAX_STOP_IDS = 100;

/**
 * Ids an unfinished drain emitted last, to skip them when changes above its place move them below
 * where the next poll starts reading (at most as many as left the list between two polls).
 */
export const MAX_DONE_IDS = 200;

/**
 * Requests every poll may send whatever its budget says, so that each poll makes progress: enough
 * to find the end of the list and read one page of it.
 */
export const MIN_REQUESTS_PER_POLL = 3;

export type ListOrder = 'newest' | 'oldest';

/** Where an unfinished drain goes on: the last page it read, and where it stops. */
export interface DrainState {
	/** Ids of the last page the drain read, in list order. */
	anchor: string[];
	/** Position (0-based, in list order) of the anchor's last id when it was read. */
	offset: number;
	/** `meta.total` when it was read, to estimate how far new messages pushed the anchor. */
	total?: number;
	/** The newest ids known before the drain began: the drain ends at the first of them. */
	stop: string[];
	/** The ids this drain emitted last, most recent first (at most MAX_DONE_IDS). */
	done?: string[];
	/** The list order the drain reads in (guessed or known): a drain never changes direction. */
	order: ListOrder;
	/** Whether it emits everything down to the end of the list (Emit Existing), dated old or not. */
	all?: boolean;
	/** The list's length before the drain began: its end lies about that far from the oldest end. */
	known?: number;
}

/** The trigger's memory, kept in the workflow's static data (small JSON, bounded). */
export interface TriggerState {
	/** Which account (Base URL + key hash) this state belongs to: another one starts afresh. */
	account?: string;
	/** Which filters this state belongs to: changing them starts afresh. */
	filterKey?: string;
	/** The API's list order, once the data has shown it (never a guess). */
	order?: ListOrder;
	/** `meta.total` and the page size at the last poll: where the last page is. */
	total?: number;
	perPage?: number;
	/** Newest `created_at` seen, when messages have timestamps. */
	watermark?: string;
	/** Ids known (emitted or noted), newest first, at most MAX_REMEMBERED_IDS. */
	seen?: string[];
	/** A backlog not read to the end yet (the poll budget ran out). */
	drain?: DrainState;
}

export interface PollResult {
	/** New messages, oldest first. */
	emit: IDataObject[];
	state: TriggerState;
}

interface Listing {
	items: IDataObject[];
	/** When this poll read it, in reads: a copy older than the page read before it may be stale. */
	seq?: number;
	/** `meta.total` when the server gives it as a number or a numeric string. */
	total?: number;
}

const idOf = (item: IDataObject) => String(item.id);
const timeOf = (item: IDataObject) =>
	typeof item.created_at === 'string' && !Number.isNaN(Date.parse(item.created_at))
		? Date.parse(item.created_at)
		: undefined;
const reversed = <T>(items: T[]) => [...items].reverse();

/** A count from `meta`: numbers and numeric strings; anything else is no information. */
function count(value: unknown): number | undefined {
	const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
	return typeof n === 'number' && Number.isInteger(n) && n >= 0 ? n : undefined;
}

/**
 * The message list as one poll reads it, through the page walker (each page requested at most once,
 * a server ignoring `page` reported), within n8n's poll budget. `meta` is a hint only: the page size
 * is what pages really hold (a clamp may be silent) and the total may be missing or a string.
 */
class Pages {
	/** Pages read this poll. Each is read through its own walker: under a shifting list a page may
	 * legitimately repeat items of another, which a single walker would take for ignored paging. */
	private readonly read = new Map<number, Listing>();

	/** The page size the server really uses, as far as this poll can tell. */
	perPage: number;

	/** The latest `meta.total`, when the server gives one. */
	total?: number;

	/** The list's length as counted from its last page, when the server gives no total. */
	estimate?: number;

	/** Set once the budget refused a request: the poll saves its progress and ends. */
	outOfTime = false;

	requests = 0;

	/** A request allowed past the budget (see stretch). */
	private grace = 0;

	private stretched = false;

	/** Counts page reads, so a walk can tell a copy read before its previous page from one read after. */
	private seq = 0;

	constructor(
		private readonly ctx: IPollFunctions,
		private readonly qs: IDataObject,
		private readonly budgetEnds?: number,
		perPage?: number,
	) {
		this.perPage = perPage ?? MAX_PAGE_SIZE;
	}

	private async fetch(number: number): Promise<Listing> {
		const request = { method: 'GET' as const, path: '/messages', qs: this.qs, resource: 'Message' };
		const page = await new PageWalker(this.ctx, request).page(number);
		const listing = this.listing(page);
		// The very items of page 1 again: the server ignores `page`, unless page 1 itself moved on
		// (new messages pushed exactly one page down), which reading page 1 again tells.
		const first = this.read.get(1);
		const same = (a: IDataObject[], b: IDataObject[]) =>
			a.length > 0 && a.length === b.length && a.every((item, i) => idOf(item) === idOf(b[i]));
		if (
			number > 1 &&
			first &&
			same(first.items, listing.items) &&
			same(first.items, this.listing(await new PageWalker(this.ctx, request).page(1)).items)
		) {
			throw pagingIgnoredError(
				this.ctx.getNode(),
				number,
				first.items.length,
				this.total,
				request,
				'Nothing was emitted; the next poll tries again.',
			);
		}
		listing.seq = ++this.seq;
		this.read.set(number, listing);
		return listing;
	}

	private allowed(): boolean {
		const late = this.budgetEnds !== undefined && Date.now() > this.budgetEnds;
		if (this.grace > 0) {
			this.grace--;
			this.requests++;
			return true;
		}
		if (this.outOfTime || (late && this.requests >= MIN_REQUESTS_PER_POLL)) {
			this.outOfTime = true;
			return false;
		}
		this.requests++;
		return true;
	}

	private listing(page: Awaited<ReturnType<PageWalker['page']>>): Listing {
		const meta = (page.meta ?? {}) as IDataObject;
		const total = count(meta.total);
		const claimed = count(meta.per_page) || MAX_PAGE_SIZE;
		const size = page.items.length;
		if (total !== undefined) this.total = total;
		if (
			size > 0 &&
			size < claimed &&
			total !== undefined &&
			(page.number - 1) * claimed + size < total
		) {
			// Fewer than claimed while more follow: the server clamps without saying so.
			this.perPage = size;
		} else if (!(this.perPage < claimed && size <= this.perPage)) {
			// A clamp seen before holds while pages fit it.
			this.perPage = claimed;
		}
		return { items: page.items, total };
	}

	/**
	 * Page `number` (read once per poll, or again when the copy at hand was read before `after`, the
	 * read of the page a walk saw last: items may have moved onto it since); undefined when the budget
	 * ran out.
	 */
	async get(number: number, after = 0): Promise<Listing | undefined> {
		const known = this.read.get(number);
		if (known && (known.seq ?? 0) > after) return known;
		return this.allowed() ? await this.fetch(number) : undefined;
	}

	/**
	 * One more request after the budget ran out, once per poll: for the page a drain most likely ends
	 * on. A poll that only finds a drain finished emits nothing, and n8n saves a trigger's memory only
	 * with emitted items, so every later poll would repeat that read until a new message arrives.
	 */
	stretch(): boolean {
		if (this.stretched || !this.outOfTime) return false;
		this.stretched = true;
		this.outOfTime = false;
		this.grace = 1;
		return true;
	}

	/** Page `number` read again, as it is now (items may have moved onto it). */
	async reread(number: number): Promise<Listing | undefined> {
		return this.allowed() ? await this.fetch(number) : undefined;
	}

	/** The page holding position `offset` (0-based). */
	pageOf(offset: number): number {
		return Math.floor(Math.max(0, offset) / this.perPage) + 1;
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

/**
 * The number of the last non-empty page, starting from a guess: the total when there is one, then
 * checked against the pages themselves (a total may be missing, wrong or a string). Undefined when
 * the budget ran out.
 */
async function lastPage(pages: Pages, guess: number): Promise<number | undefined> {
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
function lastPageGuess(pages: Pages, total?: number): number {
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
async function walk(
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
			for (let round = 0; round < 3; round++) {
				const dropped = page.total === undefined || before === undefined || page.total < before;
				if (!dropped) break;
				const again = await pages.reread(lastPageRead);
				if (!again) return { end: 'time', lastPage: lastPageRead, lastItems };
				for (const item of again.items) if (visit(item) === 'stop') return { end: 'stop' };
				// Without the first item of this page on it, the list moved down again in between.
				const first = page.items[0];
				const moved = first !== undefined && !again.items.some((i) => idOf(i) === idOf(first));
				if (again.total === undefined || page.total === undefined || !moved) break;
				const next = await pages.reread(number);
				if (!next) return { end: 'time', lastPage: lastPageRead, lastItems: again.items };
				before = again.total;
				page = next;
			}
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

/** The drain cursor after reading up to (and including) `page` of `order`. */
function cursor(
	pages: Pages,
	order: ListOrder,
	page: number,
	items: IDataObject[],
	stop: string[],
	all: boolean,
	done: string[] = [],
	known?: number,
): DrainState {
	// The item read last is the oldest of the page: its last one newest first, its first oldest first.
	const offset = (page - 1) * pages.perPage + (order === 'newest' ? items.length - 1 : 0);
	return {
		anchor: items.map(idOf),
		offset,
		total: pages.total,
		stop: stop.slice(0, MAX_STOP_IDS),
		done: done.slice(0, MAX_DONE_IDS),
		order,
		...(all ? { all } : {}),
		...(known !== undefined ? { known } : {}),
	};
}

/** Both ends of a list whose order is unknown, so the boundary is remembered whichever end is newest. */
function bothEnds(ids: string[]): string[] {
	if (ids.length <= MAX_REMEMBERED_IDS) return ids;
	const half = MAX_REMEMBERED_IDS / 2;
	return [...ids.slice(0, half), ...ids.slice(-half)];
}

function newestTime(watermark: string | undefined, items: IDataObject[]): string | undefined {
	let newest = watermark;
	for (const item of items) {
		const time = timeOf(item);
		if (time !== undefined && (newest === undefined || time > Date.parse(newest))) {
			newest = new Date(time).toISOString();
		}
	}
	return newest;
}

/** First activation: note where the list stands (both ends while its order is not known). */
async function initialState(pages: Pages, base: TriggerState): Promise<PollResult | undefined> {
	const first = await pages.get(1);
	if (!first) return undefined;
	const order = orderFromTimestamps(first.items);
	let known: IDataObject[] = order === 'oldest' ? reversed(first.items) : first.items;
	if (order !== 'newest' && first.items.length > 0) {
		const lastNumber = await lastPage(pages, lastPageGuess(pages));
		if (lastNumber === undefined) return undefined;
		if (lastNumber > 1) {
			// A short last page is joined by the one before it: a boundary of one or two ids is soon
			// gone (deleted, or out of a Status filter), and then old messages would look new.
			let tail = (await pages.get(lastNumber))!.items;
			if (tail.length < pages.perPage && lastNumber > 2) {
				const before = await pages.get(lastNumber - 1);
				if (!before) return undefined;
				tail = [...before.items, ...tail];
			}
			known = order === 'oldest' ? reversed(tail) : [...reversed(tail), ...first.items];
		}
	}
	return {
		emit: [],
		state: {
			...base,
			order,
			seen: known.map(idOf).slice(0, MAX_REMEMBERED_IDS),
			watermark: newestTime(undefined, known),
			total: pages.total,
			perPage: pages.perPage,
		},
	};
}

/**
 * Learns the list order while nothing else tells it (no timestamps, or all equal). New messages join
 * the list at its newest end: the end showing an unknown message while the other shows a known one
 * is the newest. Only the ends count, as status changes under a Status filter move messages in the
 * middle; a stored order is never revisited. Returns 'idle' when both ends are as they were, and
 * undefined when neither tells (e.g. both new); 'time' when the budget ran out.
 */
async function learnOrder(
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

/**
 * Goes on with an unfinished drain, from a page at or before its anchor in reading order, towards
 * the oldest end until the first id known before the drain began. What it passes on the way that is
 * known already (read by this drain, or newer) is skipped, never a reason to stop: only the ids known
 * before the drain mark its end.
 *
 * Oldest first (read backwards), new messages join after the anchor and removals only move it towards
 * page 1: its old page is never past it. Newest first, new messages push it down and removals pull
 * it up: it moved by at least the change of the total (it only gained what arrived, and lost at most
 * what left), so its old place plus that change is never past it. Without a total, a page counts as
 * not past it when it starts with a message known to be newer than the gap (one this drain or a later
 * read took, or the anchor), else the page before it is tried.
 */
async function continueDrain(
	pages: Pages,
	drain: DrainState,
	seen: Set<string>,
	taken: Set<string>,
	into: IDataObject[],
): Promise<DrainState | undefined> {
	const anchor = new Set(drain.anchor);
	const stop = new Set(drain.stop);
	const done = new Set(drain.done ?? []);
	const newer = (id: string) => anchor.has(id) || done.has(id) || (seen.has(id) && !stop.has(id));
	let start = pages.pageOf(drain.offset);
	if (drain.order === 'newest') {
		const first = await pages.get(1);
		if (!first) return drain;
		if (drain.total !== undefined && pages.total !== undefined) {
			start = pages.pageOf(drain.offset + pages.total - drain.total);
		} else {
			for (; start > 1; start--) {
				const page = await pages.get(start);
				if (!page) return drain;
				if (page.items.length > 0 && newer(idOf(page.items[0]))) break;
			}
		}
	}
	// Unknown messages before the first known newer one arrived after the drain began: they sit
	// above its place and are left to the read from the newest end, which meets them before any
	// remembered id. Taken here, they would be emitted again if the drain ends in a later poll.
	let placed = false;
	const deferred: IDataObject[] = [];
	const take = (item: IDataObject) => {
		taken.add(idOf(item));
		into.push(item);
	};
	const result = await walk(
		pages,
		drain.order,
		start,
		(item) => {
			const id = idOf(item);
			if (stop.has(id)) return 'stop';
			if (newer(id)) {
				placed = true;
				return 'skip';
			}
			if (taken.has(id) || deferred.some((d) => idOf(d) === id)) return 'skip';
			if (!placed) deferred.push(item);
			else take(item);
			return 'take';
		},
		drain.known,
	);
	// Nothing known met (all of it left the list): the deferred ones may be the gap itself; taken
	// rather than risk losing them.
	if (!placed) deferred.forEach(take);
	if (result.end !== 'time') return undefined;
	if (result.lastPage === undefined) return drain;
	return cursor(
		pages,
		drain.order,
		result.lastPage,
		result.lastItems!,
		drain.stop,
		drain.all === true,
		[...reversed(into.map(idOf)), ...(drain.done ?? [])],
		drain.known,
	);
}

/**
 * Reads from the newest end until a remembered id. With timestamps, a full page's worth of
 * messages older than the watermark in a row also ends it: the remembered ones have left the list
 * (e.g. their status changed under a Status filter) and everything further is older still.
 */
async function readNew(
	pages: Pages,
	order: ListOrder,
	state: TriggerState,
	seen: Set<string>,
	taken: Set<string>,
	all: boolean,
): Promise<{ fresh: IDataObject[]; reachedSeen: boolean; drain?: DrainState }> {
	const watermark = state.watermark !== undefined ? Date.parse(state.watermark) : undefined;
	const isOld = (item: IDataObject) => {
		const time = timeOf(item);
		return !all && watermark !== undefined && time !== undefined && time < watermark;
	};
	let start = 1;
	if (order === 'oldest') {
		const guess = lastPageGuess(pages, state.total);
		const found = await lastPage(pages, guess);
		if (found === undefined) return { fresh: [], reachedSeen: false };
		start = found;
	}
	const fresh: IDataObject[] = [];
	let oldInARow = 0;
	let reachedSeen = false;
	// The messages known before this read, at the oldest end: a drain this read leaves ends there.
	const known = all ? 0 : state.total;
	const result = await walk(
		pages,
		order,
		start,
		(item) => {
			const id = idOf(item);
			if (seen.has(id)) {
				reachedSeen = true;
				return 'stop';
			}
			// New messages arriving mid-poll push a newest-first list down: the same one twice.
			if (taken.has(id)) return 'skip';
			taken.add(id);
			fresh.push(item);
			oldInARow = isOld(item) ? oldInARow + 1 : 0;
			return oldInARow >= pages.perPage ? 'stop' : 'take';
		},
		known,
	);
	if (result.end === 'time') {
		if (result.lastPage === undefined) return { fresh: [], reachedSeen: false, drain: undefined };
		return {
			fresh,
			reachedSeen: false,
			drain: cursor(pages, order, result.lastPage, result.lastItems!, [...seen], all, [], known),
		};
	}
	if (!reachedSeen && !all) {
		// Without a remembered message to anchor them, only the date can tell: older ones are noted
		// as known, not emitted.
		return { fresh: fresh.filter((item) => !isOld(item)), reachedSeen, drain: undefined };
	}
	return { fresh, reachedSeen, drain: undefined };
}

/**
 * The state after a poll. `ids` were read from the newest end this poll and go first; `older` (what
 * a drain emitted, below the newest known) go after the ids already known: the read from the newest
 * end stops at the first remembered id, so the bound must never push the newest ones out.
 */
function remember(
	state: TriggerState,
	ids: string[],
	fresh: IDataObject[],
	pages: Pages,
	drain?: DrainState,
	older: string[] = [],
): TriggerState {
	const seen = [...new Set([...ids, ...(state.seen ?? []), ...older])].slice(0, MAX_REMEMBERED_IDS);
	const next: TriggerState = {
		...state,
		seen,
		watermark: newestTime(state.watermark, fresh),
		total: pages.total ?? pages.estimate,
		perPage: pages.perPage,
	};
	if (next.total === undefined) delete next.total;
	if (next.watermark === undefined) delete next.watermark;
	if (drain) next.drain = drain;
	else delete next.drain;
	return next;
}

async function poll(
	ctx: IPollFunctions,
	pages: Pages,
	state: TriggerState,
	all: boolean,
): Promise<PollResult | undefined> {
	// What an unfinished drain emitted counts as known once it ends, for the read from the newest end.
	const seen = new Set([...(state.seen ?? []), ...(state.drain?.done ?? [])]);
	const taken = new Set<string>();
	const drained: IDataObject[] = [];

	// An unfinished drain goes first: it holds the oldest messages not emitted yet.
	if (state.drain) {
		const drain = await continueDrain(pages, state.drain, seen, taken, drained);
		if (drain) {
			const emitted = drain === state.drain ? [] : drained;
			ctx.logger.debug(
				`Outreach Automation Trigger: budget ran out, got to position ${drain.offset} of ${drain.total ?? 'an unknown number of'} messages (${drained.length} emitted this poll); the next poll goes on from there`,
			);
			return {
				emit: reversed(emitted),
				state: { ...remember(state, [], emitted, pages, drain), seen: state.seen ?? [] },
			};
		}
	}

	let order = state.order ?? state.drain?.order;
	if (!order && !all) {
		const learned = await learnOrder(pages, seen, state.total);
		if (learned === 'time') return drained.length ? done() : undefined;
		if (learned === 'idle') return done();
		order = learned;
	}
	// Still unknown (one page of only new messages, or no clue at either end): read it in the
	// likeliest order for this poll only; the stored order waits for evidence.
	let scanOrder = order;
	if (!scanOrder) {
		const first = await pages.get(1);
		if (!first) return drained.length ? done() : undefined;
		order = orderFromTimestamps(first.items);
		scanOrder = order ?? guessOrder(first.items);
	}
	const { fresh, drain } = await readNew(pages, scanOrder, state, seen, taken, all);
	if (drain) {
		ctx.logger.debug(
			`Outreach Automation Trigger: budget ran out, got to position ${drain.offset} of ${drain.total ?? 'an unknown number of'} messages (${fresh.length + drained.length} emitted this poll); the next poll goes on from there`,
		);
	}
	const nextOrder = state.order ?? order;
	const emit = [...reversed(drained), ...reversed(fresh)];
	// Unknown order: both ends of a full read are kept, so the boundary is there whichever is newest.
	const freshIds = fresh.map(idOf);
	// A finished drain's messages are remembered too: new ones it met above its place would
	// otherwise look new to the next poll.
	const drainedIds = drain ? [] : [...(state.drain?.done ?? []), ...drained.map(idOf)];
	const ids = nextOrder || drain ? freshIds : bothEnds(freshIds);
	return {
		emit,
		state: remember(
			{ ...state, order: nextOrder },
			ids,
			[...fresh, ...drained],
			pages,
			drain,
			drainedIds,
		),
	};

	function done(): PollResult {
		const older = [...(state.drain?.done ?? []), ...drained.map(idOf)];
		return {
			emit: reversed(drained),
			state: remember(state, [], drained, pages, undefined, older),
		};
	}
}

/** The fields and types a saved state may have; anything else is not ours. */
export function validState(raw: unknown): raw is TriggerState {
	if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return false;
	const s = raw as IDataObject;
	const optional = (key: string, ok: (v: unknown) => boolean) => s[key] === undefined || ok(s[key]);
	const str = (v: unknown) => typeof v === 'string';
	const strings = (v: unknown) => Array.isArray(v) && v.every(str);
	const num = (v: unknown) => typeof v === 'number' && Number.isFinite(v) && v >= 0;
	const order = (v: unknown) => v === 'newest' || v === 'oldest';
	const drain = (v: unknown) => {
		if (typeof v !== 'object' || v === null) return false;
		const d = v as IDataObject;
		return (
			strings(d.anchor) &&
			num(d.offset) &&
			(d.total === undefined || num(d.total)) &&
			(d.known === undefined || num(d.known)) &&
			strings(d.stop) &&
			(d.done === undefined || strings(d.done)) &&
			order(d.order)
		);
	};
	return (
		optional('account', str) &&
		optional('filterKey', str) &&
		optional('order', order) &&
		optional('total', num) &&
		optional('perPage', (v) => num(v) && (v as number) > 0) &&
		optional('watermark', (v) => str(v) && !Number.isNaN(Date.parse(v as string))) &&
		optional('seen', strings) &&
		optional('drain', drain)
	);
}

/**
 * One poll: every message not emitted before, oldest first, each once. Costs one request when
 * nothing is new. With `emitExisting`, the first poll emits what is already there instead of only
 * taking note. When the budget runs out, what was read is emitted and the next poll goes on from
 * there (a drain); a failed page throws and leaves `previous` as it was.
 */
export async function pollNewMessages(
	ctx: IPollFunctions,
	qs: IDataObject,
	identity: { filterKey: string; account: string },
	previous: TriggerState,
	emitExisting: boolean,
	budgetEnds?: number,
): Promise<PollResult> {
	const pages = new Pages(ctx, qs, budgetEnds, previous.perPage);
	const base: TriggerState = { account: identity.account, filterKey: identity.filterKey };
	let result: PollResult | undefined;
	if (previous.account !== identity.account || previous.filterKey !== identity.filterKey) {
		result = emitExisting
			? await poll(ctx, pages, { ...base, seen: [] }, true)
			: await initialState(pages, base);
	} else {
		result = await poll(ctx, pages, previous, previous.drain?.all === true);
	}
	if (!result) {
		ctx.logger.debug(
			`Outreach Automation Trigger: budget ran out after ${pages.requests} requests before anything could be emitted; the next poll tries again`,
		);
	}
	return result ?? { emit: [], state: previous };
}

/** Manual "Fetch Test Event": the newest matching message, state untouched. */
export async function newestMessage(
	ctx: IPollFunctions,
	qs: IDataObject,
	state: TriggerState,
): Promise<IDataObject | undefined> {
	const pages = new Pages(ctx, qs);
	const first = (await pages.get(1))!;
	const order = state.order ?? orderFromTimestamps(first.items) ?? guessOrder(first.items);
	if (order === 'newest' || first.items.length === 0) return first.items[0];
	const lastNumber = (await lastPage(pages, lastPageGuess(pages)))!;
	const last = (await pages.get(lastNumber))!;
	return last.items[last.items.length - 1];
}
