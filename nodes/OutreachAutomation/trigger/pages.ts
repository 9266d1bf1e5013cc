/**
 * One poll's page reads: each page read once (again only when it may have moved), within n8n's
 * poll budget, with the page size and total the server really serves.
 */
import type { IDataObject, IPollFunctions } from 'n8n-workflow';

import { now } from '../transport/clock';
import { MAX_PAGE_SIZE } from '../transport/constants';
import { pagingIgnoredError } from '../transport/errors';
import { PageWalker } from '../transport/pages';
import { idOf } from './state';

/**
 * Requests every poll may send whatever its budget says, so that each poll makes progress: enough
 * to find the end of the list and read one page of it.
 */
export const MIN_REQUESTS_PER_POLL = 3;

export interface Listing {
	items: IDataObject[];
	/** When this poll read it, in reads: a copy older than the page read before it may be stale. */
	seq?: number;
	/** `meta.total` when the server gives it as a number or a numeric string. */
	total?: number;
}

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
export class Pages {
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
		const late = this.budgetEnds !== undefined && now() > this.budgetEnds;
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
