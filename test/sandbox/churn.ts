/**
 * List churn: items that leave, arrive or change status between the page reads of a client's walk, as on a
 * live account. Offset paging then shifts under the client; the log says exactly what changed, so a test can
 * tell which items stayed in the list the whole time. Seeded: the same seed and requests churn the same items.
 */
import { Random } from './random';
import {
	OUTBOUND_STATUSES,
	type ChurnEventRule,
	type ChurnSettings,
	type SandboxConfig,
} from './schemas';
import type { Store } from './store';
import type { ConnectionStatus } from './types';

export type ChurnResource = 'leads' | 'messages';

/** A list request as the handler read it: which list and with which filter. */
export interface ListRead {
	resource: ChurnResource;
	filter: Record<string, string | undefined>;
	/** The reader's position: the end of the page just served, counted in list order (0 when unknown). */
	end?: number;
	/** Whether the list is served newest first (the store keeps it oldest first). */
	newestFirst?: boolean;
}

type Amounts = Pick<ChurnSettings, 'remove' | 'insert' | 'changeStatus'> &
	Partial<Pick<ChurnEventRule, 'removeBefore' | 'removeAfter' | 'removeAt'>>;

export interface ChurnEvent {
	id: number;
	/** It fired right after this list request (counting lead and message list requests from 1). */
	listRequest: number;
	/** 'config' (the churn option) or the id of an event queued with POST /__sandbox/churn. */
	source: 'config' | number;
	resource: ChurnResource;
	/** The filter of the list read that triggered it; removals and status changes are drawn from that list. */
	filter: Record<string, string>;
	removed: string[];
	inserted: string[];
	statusChanged: { id: string; from: string; to: string }[];
	/** Items that are no longer in that filtered list: removed, or status-changed out of a status filter. */
	left: string[];
}

export interface QueuedChurn extends Amounts {
	id: number;
	resource?: ChurnResource;
	/** How many more list requests until it fires. */
	remaining: number;
}

const CONNECTION_CYCLE: Record<ConnectionStatus, ConnectionStatus> = {
	none: 'pending',
	pending: 'accepted',
	accepted: 'none',
};
const nextOutbound = (status: string) =>
	OUTBOUND_STATUSES[(OUTBOUND_STATUSES.indexOf(status as never) + 1) % OUTBOUND_STATUSES.length];

export class Churn {
	private listRequests = 0;
	private events: ChurnEvent[] = [];
	private queue: QueuedChurn[] = [];
	private nextId = 1;
	private rng: Random;

	constructor(private seed: number) {
		this.rng = new Random(seed);
	}

	/** A new seed for the draws; the log and the queue stay. */
	reseed(seed: number): void {
		this.seed = seed;
		this.rng = new Random(seed);
	}

	/** Forgets everything: counter, log, queue; the PRNG starts again from `seed`. */
	clear(seed = this.seed): void {
		this.seed = seed;
		this.rng = new Random(seed);
		this.listRequests = 0;
		this.events = [];
		this.queue = [];
		this.nextId = 1;
	}

	add(rule: ChurnEventRule): QueuedChurn {
		const { after, ...amounts } = rule;
		const queued: QueuedChurn = { id: this.nextId++, ...amounts, remaining: after };
		this.queue.push(queued);
		return { ...queued };
	}

	log(): { listRequests: number; events: ChurnEvent[]; pending: QueuedChurn[] } {
		return {
			listRequests: this.listRequests,
			events: this.events.map((e) => structuredClone(e)),
			pending: this.queue.map((q) => ({ ...q })),
		};
	}

	/** Called once per list read of leads or messages, after the page was taken. */
	onListRead(read: ListRead, store: Store, config: Pick<SandboxConfig, 'churn'>): void {
		const n = ++this.listRequests;
		const due: [ChurnEvent['source'], Amounts][] = [];
		if (config.churn && n % config.churn.everyNthListRequest === 0)
			due.push(['config', config.churn]);
		for (const queued of [...this.queue]) {
			if (queued.resource && queued.resource !== read.resource) continue;
			if (--queued.remaining > 0) continue;
			this.queue.splice(this.queue.indexOf(queued), 1);
			due.push([queued.id, queued]);
		}
		for (const [source, amounts] of due)
			this.events.push(this.apply(read, store, amounts, source, n));
	}

	/** `k` distinct items of `items`, drawn with the churn PRNG. */
	private sample<T>(items: T[], k: number): T[] {
		if (k >= items.length) return items.slice();
		const picked = new Set<number>();
		while (picked.size < k) picked.add(Math.floor(this.rng.next() * items.length));
		return [...picked].map((i) => items[i]);
	}

	private apply(
		read: ListRead,
		store: Store,
		amounts: Amounts,
		source: ChurnEvent['source'],
		listRequest: number,
	): ChurnEvent {
		const filter = Object.fromEntries(
			Object.entries(read.filter).filter(([, v]) => v !== undefined),
		) as Record<string, string>;
		const event: ChurnEvent = {
			id: this.events.length + 1,
			listRequest,
			source,
			resource: read.resource,
			filter,
			removed: [],
			inserted: [],
			statusChanged: [],
			left: [],
		};
		if (read.resource === 'leads') this.churnLeads(read, store, filter, amounts, event);
		else this.churnMessages(read, store, filter, amounts, event);
		event.left = [
			...event.removed,
			...(filter.status !== undefined ? event.statusChanged.map((c) => c.id) : []),
		];
		return event;
	}

	private churnLeads(
		read: ListRead,
		store: Store,
		filter: Record<string, string>,
		amounts: Amounts,
		event: ChurnEvent,
	): void {
		const listed = store.findLeads(filter);
		for (const lead of this.placed(listed, read, amounts)) {
			store.leads.delete(lead.id);
			event.removed.push(lead.id);
		}
		const gone = new Set(event.removed);
		const picked = this.sample(
			listed.filter((l) => !gone.has(l.id)),
			amounts.remove + amounts.changeStatus,
		);
		for (const lead of picked.slice(0, amounts.remove)) {
			store.leads.delete(lead.id);
			event.removed.push(lead.id);
		}
		for (const lead of picked.slice(amounts.remove)) {
			const to = CONNECTION_CYCLE[lead.connection_status];
			store.updateLead(lead, { connection_status: to });
			event.statusChanged.push({ id: lead.id, from: lead.connection_status, to });
		}
		const campaignId =
			filter.campaign_id !== undefined && store.campaigns.has(filter.campaign_id)
				? filter.campaign_id
				: null;
		for (let i = 0; i < amounts.insert; i++) {
			// Fits the filter being read, so the newcomer lands in that very list.
			const lead = store.addLead({
				first_name: 'Churn',
				last_name: `Newcomer ${event.id}-${i + 1}`,
				company: filter.search ?? 'Churn Inc',
				campaign_id: campaignId,
			});
			event.inserted.push(lead.id);
		}
	}

	private churnMessages(
		read: ListRead,
		store: Store,
		filter: Record<string, string>,
		amounts: Amounts,
		event: ChurnEvent,
	): void {
		const listed = store.findMessages(filter);
		for (const message of this.placed(listed, read, amounts)) {
			store.removeMessage(message.id);
			event.removed.push(message.id);
		}
		const placedGone = new Set(event.removed);
		const removed = this.sample(
			listed.filter((m) => !placedGone.has(m.id)),
			amounts.remove,
		);
		for (const message of removed) {
			store.removeMessage(message.id);
			event.removed.push(message.id);
		}
		// Only outbound messages have a status to move to; inbound ones are always 'received'.
		const gone = new Set(event.removed);
		const outbound = listed.filter((m) => m.direction === 'outbound' && !gone.has(m.id));
		for (const message of this.sample(outbound, amounts.changeStatus)) {
			const to = nextOutbound(message.status);
			event.statusChanged.push({ id: message.id, from: message.status, to });
			message.status = to;
		}
		for (let i = 0; i < amounts.insert; i++) {
			const leadId = filter.lead_id ?? this.someLeadId(store);
			const status = filter.status ?? 'sent';
			const message = store.addMessage({
				lead_id: leadId,
				campaign_id: filter.campaign_id ?? store.leads.get(leadId)?.campaign_id ?? null,
				step_index: null,
				direction: status === 'received' ? 'inbound' : 'outbound',
				status,
				body: `Churn message ${event.id}-${i + 1}`,
			});
			event.inserted.push(message.id);
		}
	}

	/**
	 * The removals placed relative to the reader: `removeAt` positions of the list as served, then
	 * `removeBefore` drawn from before the end of the page just read and `removeAfter` from after it.
	 */
	private placed<T extends { id: string }>(listed: T[], read: ListRead, amounts: Amounts): T[] {
		const served = read.newestFirst ? listed.slice().reverse() : listed;
		const end = Math.min(read.end ?? 0, served.length);
		const out = new Set<T>();
		for (const at of amounts.removeAt ?? []) if (at < served.length) out.add(served[at]);
		const free = (items: T[]) => items.filter((item) => !out.has(item));
		for (const item of this.sample(free(served.slice(0, end)), amounts.removeBefore ?? 0))
			out.add(item);
		for (const item of this.sample(free(served.slice(end)), amounts.removeAfter ?? 0))
			out.add(item);
		return [...out];
	}

	private someLeadId(store: Store): string {
		const ids = [...store.leads.keys()];
		if (ids.length === 0) return store.addLead({ first_name: 'Churn', last_name: 'Lead' }).id;
		return ids[Math.floor(this.rng.next() * ids.length)];
	}
}
