/**
 * examples/docker-compose.queue-mode.yml, the compose file docs/installing.md shows, is complete: Postgres,
 * Redis, n8n's main process and a worker on one pinned image (the n8n version the package is tested on),
 * the same encryption key, database and Redis on both, and every n8n variable one that n8n reads. Docker is
 * not run here; n8n's names come from @n8n/config (installed with the n8n-core dev dependency, n8n 2.41's
 * configuration) and, for the few n8n's own package reads, from the provisioned n8n when it is there.
 */
import fs from 'node:fs';
import path from 'node:path';

import { parse } from 'yaml';

import { cacheRoot, DEFAULT_N8N_VERSION } from '../n8n/provision';

const ROOT = path.resolve(__dirname, '..', '..');
const FILE = path.join(ROOT, 'examples', 'docker-compose.queue-mode.yml');

interface Service {
	image?: string;
	command?: string | string[];
	environment?: Record<string, string | number | boolean | null>;
	volumes?: string[];
	ports?: string[];
	depends_on?: string[] | Record<string, unknown>;
}
const compose = parse(fs.readFileSync(FILE, 'utf8'), { merge: true }) as {
	services: Record<string, Service>;
	volumes: Record<string, unknown>;
};
const { services } = compose;

/** The variable names a folder of compiled n8n code declares with @n8n/config's `@Env('NAME')`. */
function envNames(dir: string): Set<string> {
	const names = new Set<string>();
	const walk = (folder: string) => {
		for (const entry of fs.readdirSync(folder, { withFileTypes: true })) {
			const file = path.join(folder, entry.name);
			if (entry.isDirectory()) walk(file);
			else if (entry.name.endsWith('.js'))
				for (const [, name] of fs.readFileSync(file, 'utf8').matchAll(/Env\)?\('([A-Z0-9_]+)'/g))
					names.add(name);
		}
	};
	walk(dir);
	return names;
}

const CONFIG_DIR = path.dirname(require.resolve('@n8n/config/package.json'));
const CONFIG_NAMES = envNames(path.join(CONFIG_DIR, 'dist'));

/**
 * Names n8n's own package (`n8n`, not @n8n/config) declares, where in n8n 2.41.1, checked against the
 * provisioned n8n when it is there.
 */
const N8N_PACKAGE_NAMES: Record<string, string> = {
	N8N_REINSTALL_MISSING_PACKAGES: 'dist/modules/community-packages/community-packages.config.js',
};
const PROVISIONED_N8N = path.join(cacheRoot(), `n8n-${DEFAULT_N8N_VERSION}`, 'node_modules', 'n8n');
const provisioned = fs.existsSync(path.join(PROVISIONED_N8N, 'package.json'));

/** The variables of the postgres image (its documentation), which the file sets on that service. */
const POSTGRES_IMAGE_NAMES = new Set(['POSTGRES_USER', 'POSTGRES_PASSWORD', 'POSTGRES_DB']);

const n8nServices = Object.entries(services).filter(([, s]) => s.image?.includes('n8nio/n8n'));
const [mainName, main] = n8nServices.find(([, s]) => s.command === undefined) ?? [];
const [workerName, worker] = n8nServices.find(([, s]) => s.command === 'worker') ?? [];

describe(`examples/${path.basename(FILE)}`, () => {
	it('has Postgres, Redis, a main process and a worker, each n8n on the image pinned to the tested n8n', () => {
		expect(Object.keys(services).sort()).toEqual(['n8n', 'n8n-worker', 'postgres', 'redis']);
		expect(mainName).toBe('n8n');
		expect(workerName).toBe('n8n-worker');
		for (const [, service] of n8nServices)
			expect(service.image).toBe(`docker.n8n.io/n8nio/n8n:${DEFAULT_N8N_VERSION}`);
		expect(services.postgres.image).toMatch(/^postgres:\d+$/);
		expect(services.redis.image).toMatch(/^redis:\d+/);
		expect(main!.ports).toEqual(['5678:5678']);
	});

	it('gives main and worker the same database, Redis and encryption key, in queue mode', () => {
		for (const service of [main!, worker!]) {
			const env = service.environment!;
			expect(env).toMatchObject({
				DB_TYPE: 'postgresdb',
				DB_POSTGRESDB_HOST: 'postgres',
				DB_POSTGRESDB_DATABASE: services.postgres.environment!.POSTGRES_DB,
				DB_POSTGRESDB_USER: services.postgres.environment!.POSTGRES_USER,
				EXECUTIONS_MODE: 'queue',
				QUEUE_BULL_REDIS_HOST: 'redis',
				N8N_REINSTALL_MISSING_PACKAGES: 'true',
			});
			// From the .env file, required: compose refuses to start without them.
			expect(env.N8N_ENCRYPTION_KEY).toMatch(/^\$\{N8N_ENCRYPTION_KEY:\?.+\}$/);
			expect(env.DB_POSTGRESDB_PASSWORD).toMatch(/^\$\{POSTGRES_PASSWORD(:\?.+)?\}$/);
		}
		expect(services.postgres.environment!.POSTGRES_PASSWORD).toMatch(/^\$\{POSTGRES_PASSWORD/);
		// Installs from the editor: nothing manages the packages by variable (that refuses the editor's).
		expect(main!.environment).not.toHaveProperty('N8N_COMMUNITY_PACKAGES_MANAGED_BY_ENV');
	});

	it('keeps every volume it mounts: main keeps its installed packages, Postgres its data', () => {
		const mounted = Object.values(services).flatMap((s) =>
			(s.volumes ?? []).map((v) => v.split(':')[0]),
		);
		for (const volume of mounted) expect(Object.keys(compose.volumes)).toContain(volume);
		expect(main!.volumes).toContain('n8n_data:/home/node/.n8n');
		expect(services.postgres.volumes).toContain('postgres_data:/var/lib/postgresql/data');
	});

	it("sets only variables n8n reads, by n8n's names", () => {
		expect(CONFIG_NAMES.size).toBeGreaterThan(300);
		const unknown = n8nServices
			.flatMap(([, s]) => Object.keys(s.environment ?? {}))
			.filter((name) => !CONFIG_NAMES.has(name) && !(name in N8N_PACKAGE_NAMES));
		expect(unknown).toEqual([]);
		for (const name of Object.keys(services.postgres.environment!))
			expect(POSTGRES_IMAGE_NAMES).toContain(name);
	});

	(provisioned ? it : it.skip)(
		`the names read outside @n8n/config are n8n ${DEFAULT_N8N_VERSION}'s (provisioned n8n)`,
		() => {
			for (const [name, file] of Object.entries(N8N_PACKAGE_NAMES))
				expect(fs.readFileSync(path.join(PROVISIONED_N8N, file), 'utf8')).toContain(`'${name}'`);
		},
	);
});
