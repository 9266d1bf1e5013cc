/** Shapes the sandbox returns: the wire contract's resources and the control endpoints' answers. */
import type { CampaignStep, SandboxConfig } from './schemas';

export type Primitive = string | number | boolean | null;
export type ConnectionStatus = 'none' | 'pending' | 'accepted';
export type CampaignStatus = 'draft' | 'active' | 'paused';
export type MessageDirection = 'outbound' | 'inbound';

export interface Lead {
	id: string;
	first_name: string;
	last_name: string;
	company: string;
	title: string;
	linkedin_url: string;
	lead_list_id: string | null;
	campaign_id: string | null;
	connection_status: ConnectionStatus;
	created_at: string;
	updated_at: string;
	/** Custom fields sent by the client. */
	[custom: string]: Primitive;
}

export interface Campaign {
	id: string;
	name: string;
	type: string;
	lead_list_id: string | null;
	steps: CampaignStep[];
	status: CampaignStatus;
	created_at: string;
	updated_at: string;
	started_at: string | null;
	paused_at: string | null;
}

export interface Message {
	id: string;
	lead_id: string;
	campaign_id: string | null;
	step_index: number | null;
	direction: MessageDirection;
	status: string;
	body: string;
	/** Second precision; absent when the sandbox runs with timestamps: false. */
	created_at?: string;
}

export interface StepAnalytics {
	step_index: number;
	type: string;
	sent: number;
	replied: number;
	reply_rate: number;
}

export interface CampaignAnalytics {
	campaign_id: string;
	leads_total: number;
	connection_requests_sent: number;
	connections_accepted: number;
	connection_rate: number;
	messages_sent: number;
	replies: number;
	reply_rate: number;
	steps: StepAnalytics[];
}

export interface SeedCounts {
	leads: number;
	campaigns: number;
	messages: number;
}

export interface RequestLogEntry {
	seq: number;
	/** Epoch ms when the request arrived. */
	time: number;
	method: string;
	path: string;
	query: Record<string, string | string[]>;
	/** A label such as key0, 'invalid' or 'anonymous': never the key itself. */
	key: string;
	/** null while in flight; 0 when the connection was dropped. */
	status: number | null;
	body: unknown;
	/** Set when an injected fault shaped the response, e.g. 'status:503', 'drop', 'random:malformed'. */
	fault?: string;
	/**
	 * Epoch ms when the rate-limit window this request was counted in ends: requests of one key with the same
	 * value shared a window. Absent when the rate limit never counted it.
	 */
	windowEnd?: number;
}

export interface SandboxStats {
	requests: number;
	byKey: Record<string, number>;
	byStatus: Record<string, number>;
	rateLimited: number;
	faultsInjected: number;
	creates: { lead: number; campaign: number; message: number };
	/** Requests per route, e.g. 'POST /api/v1/leads', 'GET /api/v1/leads/:id'; '<METHOD> (no route)' otherwise. */
	byEndpoint: Record<string, number>;
	/** 429s answered after the operation had run (rateLimitTiming 'after', after-faults, after429Rate). */
	rateLimitedAfterRun: number;
	/** Creates whose body (key order aside) equals an earlier create's, by the same key and resource. */
	duplicateCreates: number;
	inFlight: number;
	maxConcurrent: number;
}

export interface QueuedFault {
	id: number;
	method?: string;
	path?: string;
	query?: Record<string, string>;
	status?: number;
	kind?: string;
	after: boolean;
	retryAfter: number;
	/** Matching requests still to let through before this fault applies. */
	skip: number;
	/** kind 'slow': how long the request hangs before it runs. */
	delayMs: number;
	/** How many more matching requests this fault will hit. */
	remaining: number;
}

export type { SandboxConfig, CampaignStep };
