/**
 * `npm run sandbox -- [flags]`: runs the sandbox alone (playground, manual tests, the e2e and bench runs).
 * Every flag also reads from an environment variable: --rate-limit <-> SANDBOX_RATE_LIMIT; flags win.
 */
import { parseArgs } from 'node:util';

import { toFieldErrors } from './http';
import {
	API_PREFIX,
	CONTROL_PREFIX,
	DEFAULT_OPTIONS,
	DEMO_API_KEY,
	startSandbox,
	type Sandbox,
} from './server';
import { ERROR_STYLES, OptionsSchema, PROFILE_NAMES, type SandboxOptions } from './schemas';

export const CLI_DEFAULT_PORT = 4010;

type Kind = 'int' | 'number' | 'string' | 'strings' | 'flag' | 'negated-flag' | 'churn';
interface Flag {
	name: string;
	key: keyof SandboxOptions;
	kind: Kind;
	help: string;
}

const FLAGS: Flag[] = [
	{
		name: 'port',
		key: 'port',
		kind: 'int',
		help: `port on 127.0.0.1, 0 = any free port (default ${CLI_DEFAULT_PORT})`,
	},
	{
		name: 'api-key',
		key: 'apiKeys',
		kind: 'strings',
		help: `accepted API key, repeatable (default ${DEMO_API_KEY})`,
	},
	{
		name: 'seed',
		key: 'seed',
		kind: 'int',
		help: 'number of demo leads (default 300; messages = 2 x leads)',
	},
	{ name: 'rate-limit', key: 'rateLimit', kind: 'int', help: 'requests per window per API key' },
	{ name: 'window-ms', key: 'windowMs', kind: 'int', help: 'rate-limit window length' },
	{
		name: 'max-per-page',
		key: 'maxPerPage',
		kind: 'int',
		help: 'larger per_page values are clamped to this',
	},
	{
		name: 'fixed-per-page',
		key: 'fixedPerPage',
		kind: 'int',
		help: 'serve this many per page whatever per_page asks (0: off)',
	},
	{ name: 'order', key: 'order', kind: 'string', help: 'list order: newest | oldest' },
	{
		name: 'reset-format',
		key: 'resetFormat',
		kind: 'string',
		help: 'X-RateLimit-Reset: epoch-s | epoch-ms | delta-s | http-date',
	},
	{
		name: 'no-timestamps',
		key: 'timestamps',
		kind: 'negated-flag',
		help: 'messages carry no created_at',
	},
	{
		name: 'ignore-page',
		key: 'ignorePage',
		kind: 'flag',
		help: 'always answer page 1 (a broken server)',
	},
	{
		name: 'delete-returns-empty',
		key: 'deleteReturnsEmpty',
		kind: 'flag',
		help: 'DELETE answers data: null',
	},
	{
		name: 'latency-ms',
		key: 'latencyMs',
		kind: 'int',
		help: 'delay before each API request is handled',
	},
	{
		name: 'latency-jitter-ms',
		key: 'latencyJitterMs',
		kind: 'int',
		help: 'up to this much more delay, random per request: requests are counted out of the order sent',
	},
	{
		name: 'error-rate',
		key: 'errorRate',
		kind: 'number',
		help: 'fraction of API requests answered 500/502/503',
	},
	{
		name: 'burst-429',
		key: 'burst429Rate',
		kind: 'number',
		help: 'fraction answered 429 without rate-limit headers',
	},
	{
		name: 'drop-rate',
		key: 'dropRate',
		kind: 'number',
		help: 'fraction whose connection is dropped unanswered',
	},
	{
		name: 'malformed-rate',
		key: 'malformedRate',
		kind: 'number',
		help: 'fraction answered 200 with invalid JSON',
	},
	{
		name: 'false-success-rate',
		key: 'falseSuccessRate',
		kind: 'number',
		help: 'fraction answered 200 {success:false}',
	},
	{
		name: 'fault-seed',
		key: 'faultSeed',
		kind: 'int',
		help: 'seed of the random faults (same seed, same faults)',
	},
	{
		name: 'profile',
		key: 'profile',
		kind: 'string',
		help: `a bundle of the options below: ${PROFILE_NAMES.join(' | ')}`,
	},
	{ name: 'meta-style', key: 'metaStyle', kind: 'string', help: 'list meta: full | absent' },
	{
		name: 'meta-total',
		key: 'metaTotal',
		kind: 'string',
		help: 'meta.total: exact | absent | string | negative | low | high',
	},
	{
		name: 'meta-per-page',
		key: 'metaPerPage',
		kind: 'string',
		help: 'meta.per_page: used | requested | absent | string',
	},
	{
		name: 'per-page-over-max',
		key: 'perPageOverMax',
		kind: 'string',
		help: 'per_page above the max: clamp | reject-400 | reject-422',
	},
	{
		name: 'churn',
		key: 'churn',
		kind: 'churn',
		help: 'list churn, e.g. every=2,remove=1,insert=1,status=1 (or off)',
	},
	{
		name: 'rate-headers',
		key: 'rateHeaders',
		kind: 'string',
		help: 'X-RateLimit-* headers: all | spec (Remaining and Reset, no Limit) | none',
	},
	{
		name: 'retry-after',
		key: 'retryAfter',
		kind: 'string',
		help: 'Retry-After on 429s: seconds | http-date | none',
	},
	{
		name: 'reset-rounding',
		key: 'resetRounding',
		kind: 'string',
		help: 'whole-second reset values: ceil | floor',
	},
	{
		name: 'clock-skew-ms',
		key: 'clockSkewMs',
		kind: 'int',
		help: 'server clock offset for reset headers and Date (negative: --clock-skew-ms=-5000)',
	},
	{
		name: 'rate-limit-timing',
		key: 'rateLimitTiming',
		kind: 'string',
		help: 'over-limit requests: before (not run) | after (run, then 429)',
	},
	{
		name: 'error-style',
		key: 'errorStyle',
		kind: 'string',
		help: `error bodies: ${ERROR_STYLES.join(' | ')}`,
	},
	{
		name: 'echo-secrets',
		key: 'echoSecrets',
		kind: 'flag',
		help: 'error bodies echo the API key and Authorization header',
	},
	{
		name: 'search-scope',
		key: 'searchScope',
		kind: 'string',
		help: 'what search on GET /leads looks in: names | record | ignored',
	},
	{
		name: 'profile-storage',
		key: 'profileStorage',
		kind: 'string',
		help: 'linkedin_url as stored: as-sent | no-scheme | country-host | mobile-host',
	},
	{
		name: 'message-bodies',
		key: 'messageBodies',
		kind: 'string',
		help: 'message bodies as stored: as-sent | normalized (line ends and runs of spaces)',
	},
	{
		name: 'html-site',
		key: 'htmlSite',
		kind: 'flag',
		help: 'play a website at the Base URL: every /api/v1 path answers an HTML 404 page',
	},
	{
		name: 'after-429-rate',
		key: 'after429Rate',
		kind: 'number',
		help: 'fraction run, then answered 429',
	},
];

/** 'every=2,remove=1,insert=1,status=1' -> the churn option; 'off' or 'none' -> null. */
function parseChurn(raw: string): unknown {
	if (/^(off|none)$/i.test(raw.trim())) return null;
	const names: Record<string, string> = {
		every: 'everyNthListRequest',
		remove: 'remove',
		insert: 'insert',
		status: 'changeStatus',
	};
	const churn: Record<string, number> = {};
	for (const part of raw
		.split(',')
		.map((p) => p.trim())
		.filter(Boolean)) {
		const [name, value] = part.split('=');
		if (!(name in names) || value === undefined || !/^\d+$/.test(value)) {
			throw new Error(`--churn: expected every=N,remove=N,insert=N,status=N or off, got "${raw}"`);
		}
		churn[names[name]] = Number(value);
	}
	return churn;
}

const envName = (flag: Flag) => `SANDBOX_${flag.name.toUpperCase().replace(/-/g, '_')}`;
const isSwitch = (kind: Kind) => kind === 'flag' || kind === 'negated-flag';

export function usage(): string {
	const defaults = DEFAULT_OPTIONS as unknown as Record<string, unknown>;
	const lines = FLAGS.map((f) => {
		const arg = isSwitch(f.kind) ? '' : ' <value>';
		const dflt =
			isSwitch(f.kind) || f.help.includes('default')
				? ''
				: ` (default ${String(defaults[f.key] ?? 'off')})`;
		return `  --${(f.name + arg).padEnd(28)} ${f.help}${dflt}  [${envName(f)}]`;
	});
	return ['Usage: npm run sandbox -- [flags]', '', ...lines, '  --help'].join('\n');
}

function convert(flag: Flag, raw: string | string[] | boolean, fromEnv: boolean): unknown {
	switch (flag.kind) {
		case 'flag':
		case 'negated-flag': {
			const on = fromEnv ? /^(1|true|yes|on)$/i.test(String(raw)) : raw === true;
			return flag.kind === 'flag' ? on : !on;
		}
		case 'strings':
			return fromEnv
				? String(raw)
						.split(',')
						.map((s) => s.trim())
						.filter(Boolean)
				: raw;
		case 'string':
			return raw;
		case 'churn':
			return parseChurn(String(raw));
		default: {
			const value = Number(raw);
			if (String(raw).trim() === '' || Number.isNaN(value))
				throw new Error(`--${flag.name}: must be a number, got "${raw}"`);
			return value;
		}
	}
}

/** Flags, then SANDBOX_* variables, to sandbox options; throws an Error naming the flag on a bad value. */
export function parseCliArgs(
	argv: string[],
	env: NodeJS.ProcessEnv = {},
): { help: boolean; options: Partial<SandboxOptions> } {
	const { values } = parseArgs({
		args: argv,
		strict: true,
		allowPositionals: false,
		options: {
			help: { type: 'boolean', short: 'h' },
			...Object.fromEntries(
				FLAGS.map(
					(f) =>
						[
							f.name,
							{ type: isSwitch(f.kind) ? 'boolean' : 'string', multiple: f.kind === 'strings' },
						] as const,
				),
			),
		},
	});
	const options: Record<string, unknown> = {};
	for (const flag of FLAGS) {
		const fromFlag = (values as Record<string, string | string[] | boolean | undefined>)[flag.name];
		const fromEnv = env[envName(flag)];
		if (fromFlag !== undefined) options[flag.key] = convert(flag, fromFlag, false);
		else if (fromEnv !== undefined && fromEnv !== '')
			options[flag.key] = convert(flag, fromEnv, true);
	}
	const checked = OptionsSchema.partial().safeParse(options);
	if (!checked.success) {
		const describe = (field: string) => {
			const flag = FLAGS.find(
				(f) => field === f.key || field.startsWith(`${f.key}.`) || field.startsWith(`${f.key}[`),
			);
			if (!flag) return `--${field}`;
			// A nested option (churn) names the part at fault too.
			const part = field.slice(flag.key.length).replace(/^\./, '');
			return part ? `--${flag.name}: ${part}` : `--${flag.name}`;
		};
		const problems = toFieldErrors(checked.error.issues).map(
			(e) => `${describe(e.field)}: ${e.message}`,
		);
		throw new Error(problems.join('\n'));
	}
	return { help: values.help === true, options: options as Partial<SandboxOptions> };
}

function describeFaults(o: SandboxOptions): string {
	const percent = (rate: number, what: string) =>
		rate > 0 ? [`${what} ${+(rate * 100).toFixed(2)}%`] : [];
	const parts = [
		...(o.latencyMs > 0 ? [`latency ${o.latencyMs} ms`] : []),
		...(o.latencyJitterMs > 0 ? [`latency jitter up to ${o.latencyJitterMs} ms`] : []),
		...percent(o.errorRate, '5xx'),
		...percent(o.burst429Rate, '429 without headers'),
		...percent(o.dropRate, 'dropped'),
		...percent(o.malformedRate, 'malformed JSON'),
		...percent(o.falseSuccessRate, 'success:false'),
		...percent(o.after429Rate, '429 after running'),
		...(o.ignorePage ? ['ignores page'] : []),
	];
	return parts.length > 0 ? `${parts.join(', ')} (fault seed ${o.faultSeed})` : 'none';
}

export function banner(sandbox: Sandbox): string {
	const o = sandbox.options;
	const demo = sandbox.apiKeys.includes(DEMO_API_KEY);
	// Keys given on the command line are the user's secrets: the banner only prints the public demo key.
	const key = demo ? DEMO_API_KEY : '<your --api-key>';
	const counts = sandbox.store.counts();
	return [
		`Outreach Automation sandbox API listening on ${sandbox.url}`,
		`  API base:  ${sandbox.url}${API_PREFIX}`,
		demo
			? `  API key:   ${DEMO_API_KEY}  (demo key; send "Authorization: Bearer ${DEMO_API_KEY}")`
			: `  API keys:  ${sandbox.apiKeys.length} given with --api-key (not printed)`,
		`  Data:      ${counts.leads} leads, ${counts.campaigns} campaigns, ${counts.messages} messages`,
		`  Limits:    ${o.rateLimit} requests per ${o.windowMs} ms per key; per_page max ${o.maxPerPage}; ` +
			`order ${o.order}; X-RateLimit-Reset as ${o.resetFormat}${o.timestamps ? '' : '; no timestamps'}`,
		`  Profile:   ${o.profile}`,
		`  Faults:    ${describeFaults(o)}`,
		`  Controls:  ${sandbox.url}${CONTROL_PREFIX}/{health,reset,seed,config,reply,messages,requests,stats,faults,churn,profiles}`,
		'',
		'Try:',
		`  curl -s -H "Authorization: Bearer ${key}" "${sandbox.url}${API_PREFIX}/leads?per_page=2"`,
		'',
		'Stop with Ctrl+C.',
	].join('\n');
}

async function main(): Promise<void> {
	let parsed: ReturnType<typeof parseCliArgs>;
	try {
		parsed = parseCliArgs(process.argv.slice(2), process.env);
	} catch (error) {
		console.error(`${(error as Error).message}\n\n${usage()}`);
		process.exit(2);
	}
	if (parsed.help) {
		console.log(usage());
		return;
	}
	let sandbox: Sandbox;
	try {
		sandbox = await startSandbox({ port: CLI_DEFAULT_PORT, ...parsed.options });
	} catch (error) {
		const busy = (error as NodeJS.ErrnoException).code === 'EADDRINUSE';
		console.error(
			busy
				? `Port ${parsed.options.port ?? CLI_DEFAULT_PORT} is in use: pass --port <n> (0 = any free port)`
				: String(error),
		);
		process.exit(1);
	}
	console.log(banner(sandbox));
	const stop = (signal: string) => {
		console.log(`\n${signal}: stopping the sandbox`);
		sandbox.stop().then(() => process.exit(0));
	};
	process.once('SIGINT', stop);
	process.once('SIGTERM', stop);
}

if (require.main === module) void main();
