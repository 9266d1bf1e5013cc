/** The request log and counters of /api/v1 traffic, for tests to assert on (counts, never the API key). */
import type { RequestLogEntry, SandboxStats } from './types';

/** Enough for a long benchmark; the oldest entries go first. */
const LOG_LIMIT = 100_000;

type Resource = keyof SandboxStats['creates'];

export class Recorder {
	private log: RequestLogEntry[] = [];
	private seq = 0;
	private stats = Recorder.emptyStats();
	private endpoints = new WeakMap<RequestLogEntry, string>();
	/** key label + resource + canonical body of every create so far. */
	private createdBodies = new Set<string>();

	private static emptyStats(): SandboxStats {
		return {
			requests: 0,
			byKey: {},
			byStatus: {},
			rateLimited: 0,
			faultsInjected: 0,
			creates: { lead: 0, campaign: 0, message: 0 },
			byEndpoint: {},
			rateLimitedAfterRun: 0,
			duplicateCreates: 0,
			inFlight: 0,
			maxConcurrent: 0,
		};
	}

	clear(): void {
		this.log = [];
		this.seq = 0;
		this.createdBodies.clear();
		// Requests still in flight will still finish and decrement.
		this.stats = { ...Recorder.emptyStats(), inFlight: this.stats.inFlight };
	}

	/** Registers an arriving request; the entry is completed by finish(). */
	begin(
		method: string,
		path: string,
		query: RequestLogEntry['query'],
		endpoint = `${method} (no route)`,
	): RequestLogEntry {
		const entry: RequestLogEntry = {
			seq: ++this.seq,
			time: Date.now(),
			method,
			path,
			query,
			key: 'anonymous',
			status: null,
			body: null,
		};
		this.endpoints.set(entry, endpoint);
		this.log.push(entry);
		if (this.log.length > LOG_LIMIT) this.log.splice(0, this.log.length - LOG_LIMIT);
		this.stats.inFlight++;
		this.stats.maxConcurrent = Math.max(this.stats.maxConcurrent, this.stats.inFlight);
		return entry;
	}

	/** Records the final status of a request (0: connection dropped). Idempotent. */
	finish(entry: RequestLogEntry, status: number, fault?: string): void {
		if (entry.status !== null) return;
		entry.status = status;
		if (fault) {
			entry.fault = fault;
			this.stats.faultsInjected++;
		}
		const s = this.stats;
		s.requests++;
		s.inFlight = Math.max(0, s.inFlight - 1);
		s.byKey[entry.key] = (s.byKey[entry.key] ?? 0) + 1;
		s.byStatus[status] = (s.byStatus[status] ?? 0) + 1;
		if (status === 429) s.rateLimited++;
		const endpoint = this.endpoints.get(entry) ?? `${entry.method} (no route)`;
		s.byEndpoint[endpoint] = (s.byEndpoint[endpoint] ?? 0) + 1;
	}

	/** A 429 sent for a request whose operation ran anyway. */
	rateLimitedAfterRun(): void {
		this.stats.rateLimitedAfterRun++;
	}

	/** Counts a create; the same body created twice by the same key is a duplicate (a retried send). */
	created(resource: Resource, key: string, body: unknown): void {
		this.stats.creates[resource]++;
		const fingerprint = `${key} ${resource} ${canonicalJson(body)}`;
		if (this.createdBodies.has(fingerprint)) this.stats.duplicateCreates++;
		else this.createdBodies.add(fingerprint);
	}

	requests(since = 0): RequestLogEntry[] {
		return this.log.filter((e) => e.seq > since).map((e) => ({ ...e }));
	}

	/** API requests so far (cheap: a virtual clock reads it on every tick). */
	count(): number {
		return this.stats.requests;
	}

	snapshot(): SandboxStats {
		const s = this.stats;
		return {
			...s,
			byKey: { ...s.byKey },
			byStatus: { ...s.byStatus },
			creates: { ...s.creates },
			byEndpoint: { ...s.byEndpoint },
		};
	}
}

/** JSON with object keys sorted, so bodies that differ only in key order compare equal. */
function canonicalJson(value: unknown): string {
	if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
	if (value !== null && typeof value === 'object') {
		const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
		return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
	}
	return JSON.stringify(value) ?? 'null';
}
