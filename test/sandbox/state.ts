/**
 * Everything one sandbox holds (config, data, rate windows, faults, log) and the control operations on it,
 * shared by the /__sandbox endpoints and the methods of the object startSandbox returns.
 */
import { Churn, type QueuedChurn } from './churn';
import { Faults } from './faults';
import { ApiError, notFound, parseBody } from './http';
import { Random } from './random';
import { profileConfig } from './profiles';
import { RateLimiter } from './rate-limit';
import { Recorder } from './recorder';
import {
	ChurnEventSpec,
	ConfigPatch,
	FaultSpec,
	InsertMessagesBody,
	ReplyBody,
	SeedSpec,
	type ChurnEventInput,
	type FaultInput,
	type InsertMessagesInput,
	type ReplyInput,
	type SandboxConfig,
	type SandboxOptions,
	type SeedInput,
} from './schemas';
import { REPLIES } from './seed';
import { Store } from './store';
import type { Message, QueuedFault, SeedCounts } from './types';

export interface Caller {
	valid: boolean;
	/** What logs and stats show: key0, key1..., 'invalid' or 'anonymous'. Never the key. */
	label: string;
	/** Rate-limit bucket: a valid key's own, else the presented token's, else the anonymous one. */
	bucket: string;
	/** The presented bearer token, only for echoSecrets (a careless server's debug output). */
	token?: string;
}

function configOf(options: SandboxOptions): SandboxConfig {
	const { port: _port, apiKeys: _keys, seed: _seed, ...config } = options;
	return config;
}

export class SandboxState {
	config: SandboxConfig;
	readonly store = new Store();
	readonly limiter = new RateLimiter();
	readonly recorder = new Recorder();
	readonly faults: Faults;
	readonly churn: Churn;
	/** For control-side choices (default reply texts), apart from the data and fault PRNGs. */
	private rng = new Random(7);
	/** For latency jitter, seeded from the fault seed: the same seed, the same delays in turn. */
	private jitter: Random;

	/**
	 * `explicit`: the startup options someone chose rather than left to the defaults or the profile; they
	 * still win when a config patch switches the profile.
	 */
	constructor(
		readonly options: SandboxOptions,
		private readonly explicit: Partial<SandboxConfig> = {},
	) {
		this.config = configOf(options);
		this.faults = new Faults(this.config.faultSeed);
		this.churn = new Churn(churnSeed(this.config.faultSeed));
		this.jitter = new Random(this.config.faultSeed);
		this.seed();
	}

	/** Back to the start: the startup config, fresh data, no log, no counters, no faults, no rate windows. */
	reset(input: SeedInput = {}): SeedCounts {
		const spec = parseBody(SeedSpec, input);
		this.config = configOf(this.options);
		this.limiter.clear();
		this.recorder.clear();
		this.faults.clear();
		this.faults.reseed(this.config.faultSeed);
		this.churn.clear(churnSeed(this.config.faultSeed));
		this.rng = new Random(7);
		this.jitter = new Random(this.config.faultSeed);
		return this.seed(spec);
	}

	/** The delay before an API request is handled: the latency, and a random part up to the jitter. */
	latency(): number {
		const { latencyMs, latencyJitterMs } = this.config;
		return latencyMs + (latencyJitterMs > 0 ? this.jitter.next() * latencyJitterMs : 0);
	}

	/** Replaces the data only; counts not given come from the startup --seed. */
	seed(input: SeedInput = {}): SeedCounts {
		const spec = parseBody(SeedSpec, input);
		const base =
			typeof this.options.seed === 'number' ? { leads: this.options.seed } : this.options.seed;
		const merged = { ...base, ...spec };
		// A new lead count implies its own default message count, not the startup one.
		if (spec.leads !== undefined && spec.messages === undefined) delete merged.messages;
		this.store.clear();
		return this.store.seed(merged);
	}

	/**
	 * Changes part of the live config. A patch naming a profile starts over from that profile (with the
	 * startup's explicit options and the rest of the patch on top): earlier patches are dropped.
	 */
	configure(patch: Partial<SandboxConfig> = {}): SandboxConfig {
		const changes = parseBody(ConfigPatch, patch);
		const { profile: _startupProfile, ...explicit } = this.explicit;
		const previousSeed = this.config.faultSeed;
		this.config =
			changes.profile !== undefined
				? profileConfig({ ...explicit, ...changes })
				: { ...this.config, ...changes };
		if (this.config.faultSeed !== previousSeed || changes.faultSeed !== undefined) {
			this.faults.reseed(this.config.faultSeed);
			this.churn.reseed(churnSeed(this.config.faultSeed));
			this.jitter = new Random(this.config.faultSeed);
		}
		return { ...this.config };
	}

	addChurn(input: ChurnEventInput): QueuedChurn {
		return this.churn.add(parseBody(ChurnEventSpec, input));
	}

	addFault(input: FaultInput): QueuedFault {
		return this.faults.add(parseBody(FaultSpec, input));
	}

	/** An inbound reply from a lead; its latest outbound message becomes 'replied'. */
	reply(input: ReplyInput = {}): Message {
		const { lead_id, body } = parseBody(ReplyBody, input);
		const store = this.store;
		const leadId = lead_id ?? store.latestOutbound((m) => store.leads.has(m.lead_id))?.lead_id;
		if (leadId === undefined)
			throw new ApiError(409, 'No lead has been sent a message yet: pass lead_id');
		const lead = store.leads.get(leadId);
		if (!lead) throw notFound('Lead', leadId);
		const answered = store.latestOutbound((m) => m.lead_id === leadId);
		if (answered) answered.status = 'replied';
		const campaignId = lead.campaign_id ?? answered?.campaign_id ?? null;
		return store.addMessage({
			lead_id: leadId,
			campaign_id: campaignId,
			step_index: answered && answered.campaign_id === campaignId ? answered.step_index : null,
			direction: 'inbound',
			status: 'received',
			body: body ?? this.rng.pick(REPLIES),
		});
	}

	/** Bulk messages for tests; without lead_id they go round-robin to the leads (one is made if none exist). */
	insertMessages(input: InsertMessagesInput): { ids: string[] } {
		const spec = parseBody(InsertMessagesBody, input);
		const store = this.store;
		const leads = spec.lead_id ? [] : [...store.leads.values()];
		if (!spec.lead_id && leads.length === 0)
			leads.push(store.addLead({ first_name: 'Test', last_name: 'Lead' }));
		const at = spec.created_at ? Date.parse(spec.created_at) : Date.now();
		const ids: string[] = [];
		for (let i = 0; i < spec.count; i++) {
			const leadId = spec.lead_id ?? leads[i % leads.length].id;
			const message = store.addMessage(
				{
					lead_id: leadId,
					campaign_id:
						spec.campaign_id !== undefined
							? spec.campaign_id
							: (store.leads.get(leadId)?.campaign_id ?? null),
					step_index: spec.step_index ?? null,
					direction: spec.direction,
					status: spec.status ?? (spec.direction === 'inbound' ? 'received' : 'sent'),
					body: spec.body ?? `Test message ${i + 1}`,
				},
				at,
			);
			ids.push(message.id);
		}
		return { ids };
	}

	identify(authorization: string | undefined): Caller {
		const token = /^Bearer +(\S+) *$/i.exec(authorization ?? '')?.[1];
		if (token === undefined) return { valid: false, label: 'anonymous', bucket: 'anonymous' };
		const index = this.options.apiKeys.indexOf(token);
		if (index < 0) return { valid: false, label: 'invalid', bucket: `token:${token}`, token };
		return { valid: true, label: keyLabel(index), bucket: keyLabel(index), token };
	}
}

/** Churn draws from its own PRNG, so turning churn on does not change which random faults a seed gives. */
const churnSeed = (faultSeed: number) => faultSeed ^ 0x5eed;

/** The label of the n-th configured key in logs and stats. */
export const keyLabel = (index: number) => `key${index}`;
