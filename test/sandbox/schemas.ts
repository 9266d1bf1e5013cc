/**
 * Zod schemas of the wire contract (request bodies and query strings) and of the sandbox's own knobs.
 * They are strict on purpose: a request the node builds wrongly must fail loudly here, not pass silently.
 */
import { z } from 'zod';

// ---------- shared pieces ----------

export const CONNECTION_STATUSES = ['none', 'pending', 'accepted'] as const;
export const CAMPAIGN_STATUSES = ['draft', 'active', 'paused'] as const;
export const OUTBOUND_STATUSES = [
	'queued',
	'sent',
	'delivered',
	'read',
	'replied',
	'failed',
] as const;
export const INBOUND_STATUSES = ['received'] as const;
export const MESSAGE_DIRECTIONS = ['outbound', 'inbound'] as const;
export const LIST_ORDERS = ['newest', 'oldest'] as const;
export const RESET_FORMATS = ['epoch-s', 'epoch-ms', 'delta-s', 'http-date'] as const;
export const FAULT_KINDS = [
	'drop',
	'malformed',
	'false-success',
	'429-no-headers',
	'no-data',
	'no-success',
	'no-id',
	'slow',
] as const;
export const META_STYLES = ['full', 'absent'] as const;
/** What `search` on GET /leads looks in: names (first/last name, company, title), the whole record, or nothing. */
export const SEARCH_SCOPES = ['names', 'record', 'ignored'] as const;
/** How the service stores a lead's linkedin_url: as sent, or rewritten the way some services and imports do. */
export const PROFILE_STORAGES = ['as-sent', 'no-scheme', 'country-host', 'mobile-host'] as const;
/** How the service stores a message body: as sent, or with line ends and runs of spaces normalised. */
export const MESSAGE_BODIES = ['as-sent', 'normalized'] as const;
export type SearchScope = (typeof SEARCH_SCOPES)[number];
export const META_TOTALS = ['exact', 'absent', 'string', 'negative', 'low', 'high'] as const;
export const META_PER_PAGES = ['used', 'requested', 'absent', 'string'] as const;
export const PER_PAGE_OVER_MAX = ['clamp', 'reject-400', 'reject-422'] as const;
export const RATE_HEADERS = ['all', 'spec', 'none'] as const;
export const RETRY_AFTER_STYLES = ['seconds', 'http-date', 'none'] as const;
export const RESET_ROUNDINGS = ['ceil', 'floor'] as const;
export const RATE_LIMIT_TIMINGS = ['before', 'after'] as const;
export const ERROR_STYLES = [
	'envelope',
	'message-errors-object',
	'errors-array',
	'error-string',
	'problem-json',
	'text',
	'html',
] as const;
export const PROFILE_NAMES = [
	'reference',
	'meta-absent',
	'meta-strings',
	'meta-no-total',
	'meta-total-low',
	'meta-total-high',
	'hidden-clamp',
	'strict-per-page',
	'big-pages',
	'no-rate-headers',
	'blind-429',
	'coarse-reset',
	'skewed-clock',
	'gateway',
	'leaky',
	'churn',
	'chaos',
] as const;
export type ProfileName = (typeof PROFILE_NAMES)[number];
export type ErrorStyle = (typeof ERROR_STYLES)[number];

const SNAKE_CASE = /^[a-z][a-z0-9_]*$/;
const snakeCase = z
	.string()
	.regex(SNAKE_CASE, 'must be lowercase snake_case, e.g. connection_message');
const nonEmpty = z.string().min(1, 'must not be empty');
const nonNegativeInt = (message = 'must be a non-negative integer') =>
	z.number({ invalid_type_error: message }).int(message).min(0, message);

function isHttpUrl(value: string): boolean {
	try {
		const { protocol } = new URL(value);
		return protocol === 'http:' || protocol === 'https:';
	} catch {
		return false;
	}
}

const isPrimitive = (value: unknown) =>
	value === null || ['string', 'number', 'boolean'].includes(typeof value);

// ---------- query strings (values arrive as strings; a repeated parameter arrives as an array) ----------

const positiveIntParam = z
	.string({ invalid_type_error: 'must be given once' })
	.regex(/^[0-9]+$/, 'must be an integer >= 1')
	.transform(Number)
	.refine((n) => Number.isSafeInteger(n) && n >= 1, 'must be an integer >= 1');
const stringParam = z.string({ invalid_type_error: 'must be given once' });

const PageQuery = z.object({
	page: positiveIntParam.default('1'),
	per_page: positiveIntParam.default('20'),
});
export type PageParams = z.infer<typeof PageQuery>;

export const EmptyQuery = z.object({}).strict();
export const LeadListQuery = PageQuery.extend({
	search: stringParam.optional(),
	campaign_id: stringParam.optional(),
}).strict();
export const CampaignListQuery = PageQuery.extend({
	status: z.enum(CAMPAIGN_STATUSES, { invalid_type_error: 'must be given once' }).optional(),
}).strict();
export const MessageListQuery = PageQuery.extend({
	lead_id: stringParam.optional(),
	campaign_id: stringParam.optional(),
	status: stringParam.optional(), // free text on purpose: the design note treats status as an open set
}).strict();

// ---------- leads ----------

const LEAD_FIELDS = {
	first_name: z.string().optional(),
	last_name: z.string().optional(),
	company: z.string().optional(),
	title: z.string().optional(),
	linkedin_url: z.string().refine(isHttpUrl, 'must be an http(s) URL').optional(),
	lead_list_id: z.string().nullable().optional(),
	campaign_id: z.string().nullable().optional(),
	connection_status: z.enum(CONNECTION_STATUSES).optional(),
};
/** On PATCH an empty text clears the field; linkedin_url "" too (lead_list_id and campaign_id take null). */
const LEAD_UPDATE_FIELDS = {
	...LEAD_FIELDS,
	linkedin_url: z
		.string()
		.refine((url) => url === '' || isHttpUrl(url), 'must be an http(s) URL')
		.optional(),
};
const READ_ONLY_LEAD_FIELDS = ['id', 'created_at', 'updated_at'];

/** Known fields are typed; any other key is a custom field and must hold a primitive. */
const leadFields = (fields: typeof LEAD_FIELDS) =>
	z
		.object(fields)
		.catchall(z.unknown())
		.superRefine((lead, ctx) => {
			for (const [key, value] of Object.entries(lead)) {
				if (key in LEAD_FIELDS) continue;
				const message = READ_ONLY_LEAD_FIELDS.includes(key)
					? 'is read-only'
					: key === 'profile_url'
						? 'unknown field profile_url: this service calls it linkedin_url'
						: isPrimitive(value)
							? undefined
							: 'a custom field must be a string, number, boolean or null';
				if (message) ctx.addIssue({ code: z.ZodIssueCode.custom, path: [key], message });
			}
		});
const LeadFields = leadFields(LEAD_FIELDS);

export const LeadCreateBody = LeadFields.superRefine((lead, ctx) => {
	if (!lead.first_name && !lead.last_name && !lead.linkedin_url) {
		ctx.addIssue({
			code: z.ZodIssueCode.custom,
			message: 'a lead needs at least one of first_name, last_name or linkedin_url',
		});
	}
});
export const LeadUpdateBody = leadFields(LEAD_UPDATE_FIELDS).superRefine((lead, ctx) => {
	if (Object.keys(lead).length === 0)
		ctx.addIssue({ code: z.ZodIssueCode.custom, message: 'no fields to update' });
});
export type LeadInput = z.infer<typeof LeadFields>;

// ---------- campaigns ----------

const ConnectionRequestStep = z
	.object({
		type: z.literal('connection_request'),
		note: z.string().max(300, 'must be at most 300 characters').optional(),
	})
	.strict();
const MessageStep = z
	.object({
		type: z.literal('message'),
		delay_days: nonNegativeInt(),
		body: nonEmpty,
	})
	.strict();
/** Any other step type is a custom step (the node's raw JSON steps mode): its other fields pass through. */
const CustomStep = z.object({ type: snakeCase }).passthrough();

export type CampaignStep =
	| z.infer<typeof ConnectionRequestStep>
	| z.infer<typeof MessageStep>
	| ({ type: string } & Record<string, unknown>);

/** Steps are discriminated by `type`, with an open-ended fallback zod's discriminatedUnion cannot express. */
const Step = z.unknown().transform((value, ctx): CampaignStep => {
	const type =
		typeof value === 'object' && value !== null ? (value as { type?: unknown }).type : undefined;
	const schema =
		type === 'connection_request'
			? ConnectionRequestStep
			: type === 'message'
				? MessageStep
				: CustomStep;
	const result = schema.safeParse(value);
	if (result.success) return result.data as CampaignStep;
	for (const issue of result.error.issues) ctx.addIssue(issue as z.IssueData);
	return z.NEVER;
});

export const CampaignCreateBody = z
	.object({
		name: nonEmpty,
		type: snakeCase,
		lead_list_id: z.string().nullable().optional(),
		steps: z.array(Step).min(1, 'must have at least one step'),
	})
	.strict();
export type CampaignInput = z.infer<typeof CampaignCreateBody>;

/** start and pause take no parameters: no body, null or {}. */
export const EmptyBody = z.object({}).strict().nullable().optional();

// ---------- messages ----------

export const MessageCreateBody = z.object({ lead_id: nonEmpty, body: nonEmpty }).strict();

// ---------- sandbox knobs (CLI flags, startSandbox options, POST /__sandbox/config) ----------

/** Between page reads of lists (leads, messages): every Nth list request, items leave, arrive or change status. */
export const ChurnConfig = z
	.object({
		everyNthListRequest: z
			.number()
			.int('must be an integer >= 1')
			.min(1, 'must be an integer >= 1'),
		remove: nonNegativeInt().default(0),
		insert: nonNegativeInt().default(0),
		changeStatus: nonNegativeInt().default(0),
	})
	.strict();
export type ChurnSettings = z.infer<typeof ChurnConfig>;

const rate = z.number().min(0, 'must be between 0 and 1').max(1, 'must be between 0 and 1');
const positiveInt = z.number().int('must be an integer >= 1').min(1, 'must be an integer >= 1');

export const ConfigSchema = z
	.object({
		rateLimit: positiveInt,
		windowMs: positiveInt,
		maxPerPage: positiveInt,
		/** Serve this many per page whatever per_page asks (0: off), as a server with one fixed page size. */
		fixedPerPage: nonNegativeInt(),
		order: z.enum(LIST_ORDERS),
		resetFormat: z.enum(RESET_FORMATS),
		timestamps: z.boolean(),
		ignorePage: z.boolean(),
		latencyMs: nonNegativeInt(),
		/**
		 * Up to this much more, drawn per request: requests reach the rate counter in another order than
		 * sent (a load balancer in front of several servers).
		 */
		latencyJitterMs: nonNegativeInt(),
		errorRate: rate,
		burst429Rate: rate,
		dropRate: rate,
		malformedRate: rate,
		falseSuccessRate: rate,
		faultSeed: z.number().int('must be an integer'),
		deleteReturnsEmpty: z.boolean(),
		/** A named bundle of the options below (and some above); options given explicitly win. */
		profile: z.enum(PROFILE_NAMES),
		metaStyle: z.enum(META_STYLES),
		metaTotal: z.enum(META_TOTALS),
		metaPerPage: z.enum(META_PER_PAGES),
		perPageOverMax: z.enum(PER_PAGE_OVER_MAX),
		churn: ChurnConfig.nullable(),
		rateHeaders: z.enum(RATE_HEADERS),
		retryAfter: z.enum(RETRY_AFTER_STYLES),
		resetRounding: z.enum(RESET_ROUNDINGS),
		clockSkewMs: z.number().int('must be an integer (ms, may be negative)'),
		rateLimitTiming: z.enum(RATE_LIMIT_TIMINGS),
		errorStyle: z.enum(ERROR_STYLES),
		echoSecrets: z.boolean(),
		after429Rate: rate,
		searchScope: z.enum(SEARCH_SCOPES),
		profileStorage: z.enum(PROFILE_STORAGES),
		messageBodies: z.enum(MESSAGE_BODIES),
		/** The Base URL is a website, not the API: every /api/v1 path answers an HTML 404 page. */
		htmlSite: z.boolean(),
	})
	.strict();
export type SandboxConfig = z.infer<typeof ConfigSchema>;
export const ConfigPatch = ConfigSchema.partial().strict();

export const DEFAULT_CONFIG: SandboxConfig = {
	rateLimit: 100,
	windowMs: 60_000,
	maxPerPage: 100,
	fixedPerPage: 0,
	order: 'newest',
	resetFormat: 'epoch-s',
	timestamps: true,
	ignorePage: false,
	latencyMs: 0,
	latencyJitterMs: 0,
	errorRate: 0,
	burst429Rate: 0,
	dropRate: 0,
	malformedRate: 0,
	falseSuccessRate: 0,
	faultSeed: 1,
	deleteReturnsEmpty: false,
	profile: 'reference',
	metaStyle: 'full',
	metaTotal: 'exact',
	metaPerPage: 'used',
	perPageOverMax: 'clamp',
	churn: null,
	rateHeaders: 'all',
	retryAfter: 'seconds',
	resetRounding: 'ceil',
	clockSkewMs: 0,
	rateLimitTiming: 'before',
	errorStyle: 'envelope',
	echoSecrets: false,
	after429Rate: 0,
	searchScope: 'names',
	profileStorage: 'as-sent',
	messageBodies: 'as-sent',
	htmlSite: false,
};

/** How much demo data to generate; `seed` seeds the PRNG (same seed, same data). */
export const SeedSpec = z
	.object({
		leads: nonNegativeInt().max(1_000_000, 'must be at most 1000000').optional(),
		campaigns: nonNegativeInt().max(10_000, 'must be at most 10000').optional(),
		messages: nonNegativeInt().max(5_000_000, 'must be at most 5000000').optional(),
		seed: z.number().int('must be an integer').optional(),
	})
	.strict();
export type SeedInput = z.infer<typeof SeedSpec>;

export const OptionsSchema = ConfigSchema.extend({
	port: z.number().int().min(0).max(65535, 'must be a port number'),
	apiKeys: z.array(nonEmpty).min(1, 'needs at least one API key'),
	/** A number is the lead count; an object sets each count and the data seed. */
	seed: z.union([nonNegativeInt(), SeedSpec]),
});
export type SandboxOptions = z.infer<typeof OptionsSchema>;

export const DEMO_API_KEY = 'sandbox-demo-key';
export const DEFAULT_OPTIONS: SandboxOptions = {
	...DEFAULT_CONFIG,
	port: 0,
	apiKeys: [DEMO_API_KEY],
	seed: {},
};

// ---------- control endpoints ----------

export const FaultSpec = z
	.object({
		method: z
			.string()
			.transform((m) => m.toUpperCase())
			.optional(),
		/** Exact path, or a prefix ending in '*'. */
		path: z.string().startsWith('/', 'must start with /').optional(),
		/** Exact-match query parameters that must all be present. */
		query: z.record(z.string()).optional(),
		status: z
			.number()
			.int()
			.min(400, 'must be an HTTP error status')
			.max(599, 'must be an HTTP error status')
			.optional(),
		kind: z.enum(FAULT_KINDS).optional(),
		times: positiveInt.default(1),
		/** Matching requests to let through untouched before the fault applies (skip 30: the 31st is hit). */
		skip: z.number().int().min(0).default(0),
		/** true: run the real operation first, then replace its response (a lost response, not a lost request). */
		after: z.boolean().default(false),
		/** Seconds announced by an injected 429 with headers. */
		retryAfter: positiveInt.default(1),
		/** kind 'slow': how long the request hangs before it runs and is answered as usual. */
		delayMs: z.number().int().min(0).max(600_000).default(0),
	})
	.strict()
	.refine((f) => (f.status === undefined) !== (f.kind === undefined), {
		message: 'give exactly one of status or kind',
	});
export type FaultInput = z.input<typeof FaultSpec>;
export type FaultRule = z.infer<typeof FaultSpec>;

/** One churn event, fired right after the `after`-th next list request (of `resource`, when given). */
export const ChurnEventSpec = z
	.object({
		after: positiveInt.default(1),
		resource: z.enum(['leads', 'messages']).optional(),
		remove: nonNegativeInt().default(0),
		insert: nonNegativeInt().default(0),
		changeStatus: nonNegativeInt().default(0),
		/** Removals drawn from before the reader's position (the end of the page just read, in list order). */
		removeBefore: nonNegativeInt().default(0),
		/** Removals drawn from the reader's position on (items the reader has not reached yet). */
		removeAfter: nonNegativeInt().default(0),
		/** Removals at these 0-based positions of the list as served (its order), taken before any removal. */
		removeAt: z.array(nonNegativeInt()).default([]),
	})
	.strict()
	.refine(
		(e) =>
			e.remove + e.insert + e.changeStatus + e.removeBefore + e.removeAfter + e.removeAt.length > 0,
		{
			message:
				'give at least one of remove, insert, changeStatus, removeBefore, removeAfter, removeAt',
		},
	);
export type ChurnEventInput = z.input<typeof ChurnEventSpec>;
export type ChurnEventRule = z.infer<typeof ChurnEventSpec>;

export const ReplyBody = z
	.object({ lead_id: nonEmpty.optional(), body: nonEmpty.optional() })
	.strict();
export type ReplyInput = z.infer<typeof ReplyBody>;

const isoDate = z.string().refine((s) => !Number.isNaN(Date.parse(s)), 'must be an ISO date');
export const InsertMessagesBody = z
	.object({
		count: positiveInt.max(1_000_000, 'must be at most 1000000'),
		lead_id: nonEmpty.optional(),
		campaign_id: z.string().nullable().optional(),
		step_index: nonNegativeInt().nullable().optional(),
		direction: z.enum(MESSAGE_DIRECTIONS).default('outbound'),
		status: z.string().optional(),
		body: nonEmpty.optional(),
		/** Give every message this timestamp, to make ties. */
		created_at: isoDate.optional(),
	})
	.strict()
	.superRefine((spec, ctx) => {
		const allowed: readonly string[] =
			spec.direction === 'inbound' ? INBOUND_STATUSES : OUTBOUND_STATUSES;
		if (spec.status !== undefined && !allowed.includes(spec.status)) {
			ctx.addIssue({
				code: z.ZodIssueCode.custom,
				path: ['status'],
				message: `must be one of ${allowed.join(', ')} for ${spec.direction} messages`,
			});
		}
	});
export type InsertMessagesInput = z.input<typeof InsertMessagesBody>;

export const RequestsQuery = z
	.object({
		since: z
			.string()
			.regex(/^[0-9]+$/, 'must be an integer >= 0')
			.transform(Number)
			.optional(),
	})
	.strict();
