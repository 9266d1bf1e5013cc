/**
 * The trigger's memory: what it keeps in the workflow's static data between polls, how that stays
 * small (bounded id lists), and which saved states are its own.
 */
import type { IDataObject } from 'n8n-workflow';

/** How many known ids the trigger remembers; see README "Trigger" for why this is enough. */
export const MAX_REMEMBERED_IDS = 1000;

/** Ids kept to mark where an unfinished drain must stop (the newest known before it began). */
export const MAX_STOP_IDS = 100;

/**
 * Ids an unfinished drain emitted last, to skip them when changes above its place move them below
 * where the next poll starts reading (at most as many as left the list between two polls).
 */
export const MAX_DONE_IDS = 200;

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

/** What `remember` needs of a poll's page reads: where the list ended and its page size. */
export interface ListView {
	total?: number;
	estimate?: number;
	perPage: number;
}

export const idOf = (item: IDataObject) => String(item.id);
export const timeOf = (item: IDataObject) =>
	typeof item.created_at === 'string' && !Number.isNaN(Date.parse(item.created_at))
		? Date.parse(item.created_at)
		: undefined;
export const reversed = <T>(items: T[]) => [...items].reverse();

/** Both ends of a list whose order is unknown, so the boundary is remembered whichever end is newest. */
export function bothEnds(ids: string[]): string[] {
	if (ids.length <= MAX_REMEMBERED_IDS) return ids;
	const half = MAX_REMEMBERED_IDS / 2;
	return [...ids.slice(0, half), ...ids.slice(-half)];
}

export function newestTime(
	watermark: string | undefined,
	items: IDataObject[],
): string | undefined {
	let newest = watermark;
	for (const item of items) {
		const time = timeOf(item);
		if (time !== undefined && (newest === undefined || time > Date.parse(newest))) {
			newest = new Date(time).toISOString();
		}
	}
	return newest;
}

/**
 * The state after a poll. `ids` were read from the newest end this poll and go first; `older` (what
 * a drain emitted, below the newest known) go after the ids already known: the read from the newest
 * end stops at the first remembered id, so the bound must never push the newest ones out.
 */
export function remember(
	state: TriggerState,
	ids: string[],
	fresh: IDataObject[],
	pages: ListView,
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
