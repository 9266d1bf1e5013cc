/** Named profiles: what each one changes over HTTP, how explicit options beat them, and the docs. */
import { readFileSync } from 'node:fs';
import path from 'node:path';

import type { ApiResponse } from './client';
import { parseCliArgs, usage } from './cli';
import { useSandbox } from './helpers';
import { profileConfig, PROFILES } from './profiles';
import { DEFAULT_CONFIG, PROFILE_NAMES, type ProfileName } from './schemas';
import { startSandbox } from './server';

const KEY = 'sk_profile_secret_42';
const t = useSandbox({ apiKeys: [KEY], rateLimit: 5 }, { leads: 60, campaigns: 2, messages: 10 });

const list = (per_page = 20) => t.api.get('/leads', { per_page });
const noLimitHeaders = (res: ApiResponse) =>
	['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'].every(
		(h) => res.headers[h] === undefined,
	);

const CHECKS: Record<ProfileName, () => Promise<void>> = {
	reference: async () =>
		expect((await list()).body.meta).toEqual({ page: 1, per_page: 20, total: 60 }),
	'meta-absent': async () => expect((await list()).body.meta).toBeUndefined(),
	'meta-strings': async () =>
		expect((await list()).body.meta).toEqual({ page: 1, per_page: '20', total: '60' }),
	'meta-no-total': async () => expect((await list()).body.meta).toEqual({ page: 1, per_page: 20 }),
	'meta-total-low': async () => expect((await list()).body.meta.total).toBe(30),
	'meta-total-high': async () => expect((await list()).body.meta.total).toBe(121),
	'hidden-clamp': async () => {
		const res = await list(100);
		expect(res.body.data).toHaveLength(50);
		expect(res.body.meta.per_page).toBe(100);
	},
	'strict-per-page': async () => {
		const res = await list(100);
		expect(res.status).toBe(422);
		expect(res.body.error.details).toEqual([{ field: 'per_page', message: 'must be at most 50' }]);
	},
	'big-pages': async () =>
		expect((await list(50_000)).body.meta).toEqual({ page: 1, per_page: 50_000, total: 60 }),
	'no-rate-headers': async () => {
		for (let i = 0; i < 5; i++) expect(noLimitHeaders(await list())).toBe(true);
		const limited = await list();
		expect(limited.status).toBe(429);
		expect(noLimitHeaders(limited)).toBe(true);
		expect(limited.headers['retry-after']).toMatch(/^\d+$/);
	},
	'blind-429': async () => {
		for (let i = 0; i < 5; i++) await list();
		const limited = await list();
		expect(limited.status).toBe(429);
		expect(noLimitHeaders(limited) && limited.headers['retry-after'] === undefined).toBe(true);
	},
	'coarse-reset': async () => {
		const reset = (await list()).headers['x-ratelimit-reset'] as string;
		expect(reset).toMatch(/GMT$/);
		expect(Date.parse(reset)).toBeLessThanOrEqual(Date.now() + 60_000);
	},
	'skewed-clock': async () => {
		const date = Date.parse((await list()).headers.date as string);
		expect(Date.now() - date).toBeGreaterThan(25_000);
	},
	gateway: async () => {
		const missing = await t.api.get('/leads/ld_x');
		expect(missing.headers['content-type']).toMatch(/^application\/problem\+json/);
		expect(noLimitHeaders(missing)).toBe(true);
		for (let i = 0; i < 4; i++) await list();
		const over = await t.api.post('/leads', { first_name: 'Over the limit' });
		expect(over.status).toBe(429);
		expect(over.body).toMatchObject({ status: 429, title: 'Too Many Requests' });
		expect([...t.sandbox.store.leads.values()].some((l) => l.first_name === 'Over the limit')).toBe(
			true,
		);
	},
	leaky: async () => {
		expect((await t.api.get('/leads/ld_x')).text).toContain(KEY);
		expect((await list()).text).not.toContain(KEY);
	},
	churn: async () => {
		await list();
		await list();
		expect((await t.control.churnLog()).events).toHaveLength(1);
	},
	chaos: async () => {
		const seen = new Set<number | string>();
		for (let i = 0; i < 5; i++)
			seen.add(
				await list().then(
					(r) => r.status,
					() => 'drop',
				),
			);
		expect((await t.control.config()).after429Rate).toBeGreaterThan(0);
	},
};

describe('each profile', () => {
	it.each(PROFILE_NAMES)(
		'%s: switched on through config, it behaves so over HTTP',
		async (profile) => {
			const config = await t.control.config({ profile });
			expect(config).toEqual({ ...profileConfig({ profile }), rateLimit: 5 });
			await CHECKS[profile]();
		},
	);

	it('is listed by GET /__sandbox/profiles, with its description and options', async () => {
		const listed = await t.control.profiles();
		expect(listed.map((p) => p.name)).toEqual([...PROFILE_NAMES]);
		expect(listed.find((p) => p.name === 'gateway')).toEqual({
			name: 'gateway',
			...PROFILES.gateway,
		});
	});
});

describe('profiles and explicit options', () => {
	it('an option given at startup beats the profile, also after switching profiles', async () => {
		const sandbox = await startSandbox({
			profile: 'hidden-clamp',
			maxPerPage: 10,
			errorStyle: 'text',
		});
		try {
			expect(sandbox.config()).toMatchObject({
				profile: 'hidden-clamp',
				maxPerPage: 10,
				metaPerPage: 'requested',
				errorStyle: 'text',
			});
			sandbox.config({ metaTotal: 'low' });
			// A profile switch starts over from that profile: earlier patches go, startup options stay.
			expect(sandbox.config({ profile: 'gateway', retryAfter: 'none' })).toEqual({
				...DEFAULT_CONFIG,
				...PROFILES.gateway.config,
				profile: 'gateway',
				maxPerPage: 10,
				errorStyle: 'text',
				retryAfter: 'none',
			});
			sandbox.reset();
			expect(sandbox.config()).toMatchObject({
				profile: 'hidden-clamp',
				maxPerPage: 10,
				metaPerPage: 'requested',
				metaTotal: 'exact',
			});
		} finally {
			await sandbox.stop();
		}
	});

	it('rejects an unknown profile', async () => {
		await expect(t.control.config({ profile: 'wild' as never })).rejects.toThrow(
			/profile: must be one of reference, /,
		);
		await expect(startSandbox({ profile: 'wild' as never })).rejects.toThrow(
			/Invalid sandbox options: profile/,
		);
	});
});

describe('command line', () => {
	it('maps every new flag to its option', () => {
		const { options } = parseCliArgs([
			'--profile',
			'gateway',
			'--meta-style',
			'absent',
			'--meta-total',
			'low',
			'--meta-per-page',
			'requested',
			'--per-page-over-max',
			'reject-400',
			'--churn',
			'every=3,remove=1,insert=2,status=1',
			'--rate-headers',
			'none',
			'--retry-after',
			'http-date',
			'--reset-rounding',
			'floor',
			'--clock-skew-ms=-5000',
			'--rate-limit-timing',
			'after',
			'--error-style',
			'html',
			'--echo-secrets',
			'--after-429-rate',
			'0.1',
		]);
		expect(options).toEqual({
			profile: 'gateway',
			metaStyle: 'absent',
			metaTotal: 'low',
			metaPerPage: 'requested',
			perPageOverMax: 'reject-400',
			churn: { everyNthListRequest: 3, remove: 1, insert: 2, changeStatus: 1 },
			rateHeaders: 'none',
			retryAfter: 'http-date',
			resetRounding: 'floor',
			clockSkewMs: -5000,
			rateLimitTiming: 'after',
			errorStyle: 'html',
			echoSecrets: true,
			after429Rate: 0.1,
		});
	});

	it('reads the SANDBOX_* variables of the new flags', () => {
		const env = {
			SANDBOX_PROFILE: 'churn',
			SANDBOX_CHURN: 'off',
			SANDBOX_CLOCK_SKEW_MS: '-250',
			SANDBOX_ECHO_SECRETS: '1',
			SANDBOX_ERROR_STYLE: 'problem-json',
		};
		expect(parseCliArgs([], env).options).toEqual({
			profile: 'churn',
			churn: null,
			clockSkewMs: -250,
			echoSecrets: true,
			errorStyle: 'problem-json',
		});
	});

	it.each([
		[['--profile', 'wild'], /--profile: must be one of reference/],
		[['--churn', 'every=2,often=1'], /--churn: expected every=N/],
		[['--churn', 'remove=1'], /--churn: everyNthListRequest: is required/],
		[['--error-style', 'xml'], /--error-style: must be one of envelope/],
	])('rejects %j', (argv, message) => {
		expect(() => parseCliArgs(argv)).toThrow(message);
	});
});

describe('documentation', () => {
	const readme = readFileSync(path.join(__dirname, 'README.md'), 'utf8');

	it('documents every profile in one line, and every flag with its variable', () => {
		for (const name of PROFILE_NAMES)
			expect(readme).toMatch(new RegExp(`^\\| \`${name}\` \\|`, 'm'));
		for (const [, flag, env] of usage().matchAll(/--([a-z0-9-]+).*\[(SANDBOX_[A-Z0-9_]+)\]/g)) {
			expect(readme).toContain(`\`--${flag}`);
			expect(readme).toContain(env);
		}
	});
});
