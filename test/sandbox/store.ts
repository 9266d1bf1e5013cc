/** The in-memory data of the sandbox: leads, campaigns and messages, with the queries the handlers need. */
import type { CampaignInput, LeadInput, SearchScope, SeedInput } from './schemas';
import { Random } from './random';
import { generateSeedData } from './seed';
import type {
	Campaign,
	CampaignAnalytics,
	CampaignStatus,
	Lead,
	Message,
	Primitive,
	SeedCounts,
} from './types';

/** Outbound statuses that mean the message left the building. */
const SENT_STATUSES = new Set(['sent', 'delivered', 'read', 'replied']);

export const DEFAULT_SEED = { leads: 300, campaigns: 6, seed: 42 };

/** ISO timestamp with milliseconds (leads and campaigns). */
export const isoMs = (at: Date | number) => new Date(at).toISOString();
/** ISO timestamp with second precision, as messages carry it: many messages share a second. */
export const isoSeconds = (at: Date | number) => `${new Date(at).toISOString().slice(0, 19)}Z`;

const ratio = (part: number, whole: number) =>
	whole === 0 ? 0 : Math.round((part / whole) * 10_000) / 10_000;

export interface MessageFilter {
	lead_id?: string;
	campaign_id?: string;
	status?: string;
}

export class Store {
	readonly leads = new Map<string, Lead>();
	readonly campaigns = new Map<string, Campaign>();
	/** In insertion order, which is also id order: list order and tie-breaking rely on it. */
	private readonly messages: Message[] = [];
	private readonly messagesById = new Map<string, Message>();
	private sequences = { ld: 0, cmp: 0, msg: 0 };

	clear(): void {
		this.leads.clear();
		this.campaigns.clear();
		this.messages.length = 0;
		this.messagesById.clear();
		this.sequences = { ld: 0, cmp: 0, msg: 0 };
	}

	/** Fills the store with deterministic demo data; counts not given default to the demo set. */
	seed(input: SeedInput = {}): SeedCounts {
		const leads = input.leads ?? DEFAULT_SEED.leads;
		const counts = {
			leads,
			campaigns: input.campaigns ?? DEFAULT_SEED.campaigns,
			messages: leads === 0 ? 0 : (input.messages ?? leads * 2),
		};
		generateSeedData(this, counts, new Random(input.seed ?? DEFAULT_SEED.seed), Date.now());
		return this.counts();
	}

	counts(): SeedCounts {
		return {
			leads: this.leads.size,
			campaigns: this.campaigns.size,
			messages: this.messages.length,
		};
	}

	/** Ids grow with creation and are fixed-width, so they sort like their creation order. */
	private nextId(prefix: keyof Store['sequences']): string {
		const width = prefix === 'msg' ? 10 : 8;
		return `${prefix}_${(++this.sequences[prefix]).toString(36).padStart(width, '0')}`;
	}

	// ---------- leads ----------

	addLead(input: LeadInput, at: Date | number = Date.now()): Lead {
		const {
			first_name = '',
			last_name = '',
			company = '',
			title = '',
			linkedin_url = '',
			lead_list_id = null,
			campaign_id = null,
			connection_status = 'none',
			...custom
		} = input;
		const stamp = isoMs(at);
		const lead: Lead = {
			id: this.nextId('ld'),
			first_name,
			last_name,
			company,
			title,
			linkedin_url,
			lead_list_id,
			campaign_id,
			connection_status,
			...(custom as Record<string, Primitive>),
			created_at: stamp,
			updated_at: stamp,
		};
		this.leads.set(lead.id, lead);
		return lead;
	}

	updateLead(lead: Lead, patch: LeadInput): Lead {
		// Rebuilt so the timestamps stay the last keys, after any new custom field.
		const { created_at, updated_at: _previous, ...fields } = lead;
		const updated = {
			...fields,
			...(patch as Record<string, Primitive>),
			created_at,
			updated_at: isoMs(Date.now()),
		} as Lead;
		this.leads.set(lead.id, updated);
		return updated;
	}

	/**
	 * `search` looks, case-insensitively, in the names (first/last name, company, title), the whole record
	 * (every field's value, the profile URL and custom fields included), or nowhere (ignored).
	 */
	findLeads(
		filter: { search?: string; campaign_id?: string },
		scope: SearchScope = 'names',
	): Lead[] {
		let leads = [...this.leads.values()];
		if (filter.campaign_id !== undefined) {
			const campaign = this.campaigns.get(filter.campaign_id);
			leads = campaign ? this.leadsOf(campaign, leads) : [];
		}
		if (filter.search && scope !== 'ignored') {
			const needle = filter.search.toLowerCase();
			const searched = (l: Lead): unknown[] =>
				scope === 'record' ? Object.values(l) : [l.first_name, l.last_name, l.company, l.title];
			leads = leads.filter((l) =>
				searched(l).some(
					(v) =>
						(typeof v === 'string' || typeof v === 'number') &&
						String(v).toLowerCase().includes(needle),
				),
			);
		}
		return leads;
	}

	/** A campaign's leads: those that joined it directly, and those on the lead list it targets. */
	leadsOf(campaign: Campaign, leads: Iterable<Lead> = this.leads.values()): Lead[] {
		const list = campaign.lead_list_id;
		return [...leads].filter(
			(l) => l.campaign_id === campaign.id || (list !== null && l.lead_list_id === list),
		);
	}

	// ---------- campaigns ----------

	addCampaign(input: CampaignInput, at: Date | number = Date.now()): Campaign {
		const stamp = isoMs(at);
		const campaign: Campaign = {
			id: this.nextId('cmp'),
			name: input.name,
			type: input.type,
			lead_list_id: input.lead_list_id ?? null,
			steps: input.steps,
			status: 'draft',
			created_at: stamp,
			updated_at: stamp,
			started_at: null,
			paused_at: null,
		};
		this.campaigns.set(campaign.id, campaign);
		return campaign;
	}

	setCampaignStatus(
		campaign: Campaign,
		status: CampaignStatus,
		at: Date | number = Date.now(),
	): Campaign {
		const stamp = isoMs(at);
		campaign.status = status;
		campaign.updated_at = stamp;
		if (status === 'active') {
			campaign.started_at ??= stamp;
			campaign.paused_at = null;
		} else if (status === 'paused') {
			campaign.paused_at = stamp;
		}
		return campaign;
	}

	findCampaigns(status?: CampaignStatus): Campaign[] {
		const campaigns = [...this.campaigns.values()];
		return status ? campaigns.filter((c) => c.status === status) : campaigns;
	}

	analytics(campaign: Campaign): CampaignAnalytics {
		const leads = this.leadsOf(campaign);
		const requested = leads.filter((l) => l.connection_status !== 'none').length;
		const accepted = leads.filter((l) => l.connection_status === 'accepted').length;
		const own = this.messages.filter((m) => m.campaign_id === campaign.id);
		const sent = own.filter((m) => m.direction === 'outbound' && SENT_STATUSES.has(m.status));
		const replied = sent.filter((m) => m.status === 'replied');
		return {
			campaign_id: campaign.id,
			leads_total: leads.length,
			connection_requests_sent: requested,
			connections_accepted: accepted,
			connection_rate: ratio(accepted, requested),
			messages_sent: sent.length,
			replies: own.filter((m) => m.direction === 'inbound').length,
			reply_rate: ratio(replied.length, sent.length),
			steps: campaign.steps.map((step, index) => {
				// A connection request is "answered" by an accepted connection; other steps by a reply.
				const [stepSent, stepReplied] =
					step.type === 'connection_request'
						? [requested, accepted]
						: [
								sent.filter((m) => m.step_index === index).length,
								replied.filter((m) => m.step_index === index).length,
							];
				return {
					step_index: index,
					type: step.type,
					sent: stepSent,
					replied: stepReplied,
					reply_rate: ratio(stepReplied, stepSent),
				};
			}),
		};
	}

	// ---------- messages ----------

	addMessage(fields: Omit<Message, 'id' | 'created_at'>, at: Date | number = Date.now()): Message {
		const message: Message = { id: this.nextId('msg'), ...fields, created_at: isoSeconds(at) };
		this.messages.push(message);
		this.messagesById.set(message.id, message);
		return message;
	}

	/** Messages have no DELETE in the API; this is for list churn (a server purging old messages). */
	removeMessage(id: string): boolean {
		const message = this.messagesById.get(id);
		if (!message) return false;
		this.messages.splice(this.messages.indexOf(message), 1);
		this.messagesById.delete(id);
		return true;
	}

	getMessage(id: string): Message | undefined {
		return this.messagesById.get(id);
	}

	findMessages(filter: MessageFilter): Message[] {
		const { lead_id, campaign_id, status } = filter;
		return this.messages.filter(
			(m) =>
				(lead_id === undefined || m.lead_id === lead_id) &&
				(campaign_id === undefined || m.campaign_id === campaign_id) &&
				(status === undefined || m.status === status),
		);
	}

	/** The newest outbound message that passes `accept`. */
	latestOutbound(accept: (m: Message) => boolean = () => true): Message | undefined {
		for (let i = this.messages.length - 1; i >= 0; i--) {
			const m = this.messages[i];
			if (m.direction === 'outbound' && accept(m)) return m;
		}
		return undefined;
	}
}
