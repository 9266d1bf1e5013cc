/** The request log and counters of /api/v1 traffic, for tests to assert on (counts, never the API key). */
import type { RequestLogEntry, SandboxStats } from './types';

/** Enough for a long benchmark; the oldest entries go first. */
const LOG_LIMIT = 100_000;

type Resource = keyof SandboxStats['creates'];

export class Recorder {
	private log: RequestLogEntry[] = [];
	private seq = 0;
	private stats = Recorder.emptyStats();

	private static emptyStats(): SandboxStats {
		return {
			requests: 0,
			byKey: {},
			byStatus: {},
			rateLimited: 0,
			faultsInjected: 0,
			creates: { lead: 0, campaign: 0, message: 0 },
			inFlight: 0,
			maxConcurrent: 0,
		};
	}

	clear(): void {
		this.log = [];
		this.seq = 0;
		// Requests still in flight will still finish and decrement.
		this.stats = { ...Recorder.emptyStats(), inFlight: this.stats.inFlight };
	}

	/** Registers an arriving request; the entry is completed by finish(). */
	begin(method: string, path: string, query: RequestLogEntry['query']): RequestLogEntry {
		const entry: RequestLogEntry = { seq: ++this.seq, time: Date.now(), method, path, query, key: 'anonymous', status: null, body: null };
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
	}

	created(resource: Resource): void {
		this.stats.creates[resource]++;
	}

	requests(since = 0): RequestLogEntry[] {
		return this.log.filter((e) => e.seq > since).map((e) => ({ ...e }));
	}

	snapshot(): SandboxStats {
		const s = this.stats;
		return { ...s, byKey: { ...s.byKey }, byStatus: { ...s.byStatus }, creates: { ...s.creates } };
	}
}
