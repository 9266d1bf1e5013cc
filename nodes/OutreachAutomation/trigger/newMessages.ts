/**
 * The poll that ties the rooms together: first activation, an unfinished drain first, then the read
 * from the newest end, and the memory saved after it. Also the manual test event.
 */
import type { IDataObject, IPollFunctions } from 'n8n-workflow';

import { continueDrain, cursor } from './drain';
import { guessOrder, learnOrder, orderFromTimestamps } from './order';
import { Pages } from './pages';
import {
	MAX_REMEMBERED_IDS,
	bothEnds,
	idOf,
	newestTime,
	remember,
	reversed,
	timeOf,
	type DrainState,
	type ListOrder,
	type PollResult,
	type TriggerState,
} from './state';
import { lastPage, lastPageGuess, walk } from './walk';

/** First activation: note where the list stands (both ends while its order is not known). */
async function initialState(
	pages: Pages,
	base: TriggerState,
): Promise<(PollResult & { noted: IDataObject[] }) | undefined> {
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
		noted: known,
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
 * A start afresh where n8n may have lost an earlier start (it never saves the poll it runs at
 * publishing when that poll emits nothing, and a restart empties this process): as a first
 * activation, but messages dated `since` or later are new, not existing. Without timestamps nothing
 * tells them apart, and this is a first activation.
 */
async function lookBack(
	ctx: IPollFunctions,
	pages: Pages,
	base: TriggerState,
	since: number,
): Promise<PollResult | undefined> {
	const first = await initialState(pages, base);
	if (!first) return undefined;
	const recent = first.noted.filter((item) => (timeOf(item) ?? -Infinity) >= since);
	if (recent.length === 0) return first;
	const { state } = first;
	if (!state.order) {
		// Timestamps that do not tell the order: what was read is all there is to go on.
		return { emit: reversed(first.noted).filter((item) => recent.includes(item)), state };
	}
	// Read from the newest end as a poll does, the recent ones not known: it ends at the newest
	// older message, or at a page of older ones.
	const recentIds = new Set(recent.map(idOf));
	const older = (state.seen ?? []).filter((id) => !recentIds.has(id));
	const watermark = new Date(since).toISOString();
	return await poll(ctx, pages, { ...state, seen: older, watermark }, false);
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

/**
 * One poll: every message not emitted before, oldest first, each once. Costs one request when
 * nothing is new. With `emitExisting`, the first poll emits what is already there instead of only
 * taking note. When the budget runs out, what was read is emitted and the next poll goes on from
 * there (a drain); a failed page throws and leaves `previous` as it was. `newSince`: where n8n may
 * have lost an earlier start, messages dated from then on count as new when starting afresh.
 */
export async function pollNewMessages(
	ctx: IPollFunctions,
	qs: IDataObject,
	identity: { filterKey: string; account: string },
	previous: TriggerState,
	emitExisting: boolean,
	budgetEnds?: number,
	newSince?: number,
): Promise<PollResult> {
	const pages = new Pages(ctx, qs, budgetEnds, previous.perPage);
	const base: TriggerState = { account: identity.account, filterKey: identity.filterKey };
	let result: PollResult | undefined;
	if (previous.account !== identity.account || previous.filterKey !== identity.filterKey) {
		result = emitExisting
			? await poll(ctx, pages, { ...base, seen: [] }, true)
			: newSince !== undefined
				? await lookBack(ctx, pages, base, newSince)
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
