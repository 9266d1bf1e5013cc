/**
 * Named profiles: each one plays another reading of what the spec leaves open, or a kind of server a client
 * meets in the wild. A profile is a set of option values over the defaults; options given explicitly win.
 */
import { DEFAULT_CONFIG, type ProfileName, type SandboxConfig } from './schemas';

export interface Profile {
	description: string;
	config: Partial<SandboxConfig>;
}

export const PROFILES: Record<ProfileName, Profile> = {
	reference: { description: 'the defaults: the design note reading of the spec', config: {} },
	'meta-absent': { description: 'lists carry no meta at all', config: { metaStyle: 'absent' } },
	'meta-strings': {
		description: 'meta.total and meta.per_page are numeric strings',
		config: { metaTotal: 'string', metaPerPage: 'string' },
	},
	'meta-no-total': {
		description: 'meta has page and per_page but no total',
		config: { metaTotal: 'absent' },
	},
	'meta-total-low': {
		description: 'meta.total is half the truth: trusting it stops a walk early',
		config: { metaTotal: 'low' },
	},
	'meta-total-high': {
		description: 'meta.total is twice the truth plus one: trusting it reads past the end',
		config: { metaTotal: 'high' },
	},
	'hidden-clamp': {
		description: 'per_page silently clamped to 50 while meta.per_page echoes the size asked for',
		config: { maxPerPage: 50, metaPerPage: 'requested' },
	},
	'strict-per-page': {
		description: 'per_page above 50 is refused with a 422 naming per_page and the maximum',
		config: { maxPerPage: 50, perPageOverMax: 'reject-422' },
	},
	'big-pages': { description: 'per_page up to 50,000', config: { maxPerPage: 50_000 } },
	'no-rate-headers': {
		description: 'no X-RateLimit-* headers anywhere; the limit still holds, 429s keep Retry-After',
		config: { rateHeaders: 'none' },
	},
	'blind-429': {
		description: 'no X-RateLimit-* headers and 429s without Retry-After',
		config: { rateHeaders: 'none', retryAfter: 'none' },
	},
	'coarse-reset': {
		description: 'X-RateLimit-Reset as an HTTP date rounded down: up to a second early',
		config: { resetFormat: 'http-date', resetRounding: 'floor' },
	},
	'skewed-clock': {
		description: 'the server clock (reset headers, Date) runs 30 s behind',
		config: { clockSkewMs: -30_000 },
	},
	gateway: {
		description:
			'a gateway: over-limit requests run, then get 429; problem+json errors; no rate headers',
		config: { rateLimitTiming: 'after', errorStyle: 'problem-json', rateHeaders: 'none' },
	},
	leaky: {
		description: 'error bodies echo the API key and the Authorization header',
		config: { echoSecrets: true },
	},
	churn: {
		description: 'every 2nd list read, one item leaves, one arrives, one changes status',
		config: { churn: { everyNthListRequest: 2, remove: 1, insert: 1, changeStatus: 1 } },
	},
	chaos: {
		description: 'seeded random faults: 5xx, 429 bursts, drops, 429 after the operation ran',
		config: { errorRate: 0.05, burst429Rate: 0.05, dropRate: 0.03, after429Rate: 0.05 },
	},
};

/**
 * The config of `profile` with `explicit` options on top. `explicit` holds only options someone chose (a flag,
 * an env variable, an option, a config patch), never defaults, so that they beat the profile.
 */
export function profileConfig(explicit: Partial<SandboxConfig>): SandboxConfig {
	const profile = explicit.profile ?? DEFAULT_CONFIG.profile;
	return { ...DEFAULT_CONFIG, ...PROFILES[profile]?.config, ...explicit, profile };
}
