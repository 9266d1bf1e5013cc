/** Measuring helpers: the rate-limit floor, a process's peak memory, and summaries of repeated runs. */
import fs from 'node:fs';
import os from 'node:os';

// ---------------------------------------------------------------------------------------------------------
// The rate-limit floor

export interface Floor {
	/** Windows the minimum number of requests needs: ceil(requestsMin / limit). */
	windows: number;
	/** The window length this floor is counted in. */
	windowMs: number;
	/** Time each window may cost beyond its length that no client can avoid (whole-second reset headers). */
	slackPerWindowMs?: number;
	/** windows x windowMs (+ the slack per window): the floor wall times are divided by. */
	floorMs: number;
	/**
	 * (windows - 1) x windowMs: the strict lower bound, counted from the first request the server received,
	 * before the last window's own requests.
	 */
	strictMs: number;
}

/**
 * The sandbox allows `limit` requests per fixed window of `windowMs` that opens with the first request after
 * the previous window closed (as a per-key fixed-window limiter does). N requests need ceil(N / limit)
 * windows; every window but the last must run its whole length before the next opens.
 */
export function rateLimitFloor(requestsMin: number, limit: number, windowMs: number): Floor {
	const windows = Math.max(1, Math.ceil(requestsMin / limit));
	return { windows, windowMs, floorMs: windows * windowMs, strictMs: (windows - 1) * windowMs };
}

export const FLOOR_EXPLANATION = (limit: number, windowMs: number, quick: boolean) =>
	[
		`Floor: the sandbox allows ${limit} requests per fixed ${windowMs / 1000} s window per API key, and says when the`,
		'window resets in X-RateLimit-Reset (epoch ms, so a client can know it exactly). The real service allows 100 per',
		`minute; the bench compresses the minute ${60_000 / windowMs}x${quick ? ' and --quick also divides the limit by 5, with the data' : ''}.`,
		'A window opens with the first request after the previous one closed. A job that needs N requests at the least',
		'(the "min" column, not what was sent) needs ceil(N / limit) windows, and every window but the last must run',
		'its full length before the next can open. The floor is ceil(N / limit) x window: the issue\'s "requests over',
		'the window size, in windows". It counts the last window in full, although a client is done once its last',
		'requests are answered, so the strict lower bound is (ceil(N / limit) - 1) x window plus that last batch: a',
		'client that paces exactly, with little n8n overhead, lands below 1.0x (e.g. 0.83x for 5 windows). wall/floor',
		"is the execution wall time (webhook call to answer; for the trigger, the poll's first request to its",
		"execution's end) over the floor. Extra requests a client sends count against it through the time they",
		'cost, never by moving the floor.',
	].join('\n');

// ---------------------------------------------------------------------------------------------------------
// Peak memory of a process (Linux)

function statusField(pid: number, field: string): number | undefined {
	try {
		const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(
			fs.readFileSync(`/proc/${pid}/status`, 'utf8'),
		);
		return match ? Number(match[1]) : undefined;
	} catch {
		return undefined;
	}
}

/** Current resident set in kB. */
export const rssKb = (pid: number) => statusField(pid, 'VmRSS');
/** Resident set high-water mark in kB (since start, or since the last resetPeak). */
export const peakRssKb = (pid: number) => statusField(pid, 'VmHWM');

/**
 * Resets the process's RSS high-water mark to its current RSS (`echo 5 > /proc/<pid>/clear_refs`, Linux
 * 4.0+), so VmHWM read later is the peak of what happened in between. Returns false where that is not
 * possible: the peak is then the process's lifetime peak (and the report says so).
 */
export function resetPeak(pid: number): boolean {
	try {
		fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
		return true;
	} catch {
		return false;
	}
}

// ---------------------------------------------------------------------------------------------------------
// The machine

export interface Machine {
	cpuModel: string;
	cpus: number;
	memoryGb: number;
	kernel: string;
	node: string;
	/** 1-minute load average when the bench started and when it ended: other work on the machine skews wall times. */
	loadStart?: number;
	loadEnd?: number;
}

export function machine(): Machine {
	let cpuModel = os.cpus()[0]?.model?.trim() ?? 'unknown';
	try {
		const line = /^model name\s*:\s*(.+)$/m.exec(fs.readFileSync('/proc/cpuinfo', 'utf8'));
		if (line) cpuModel = line[1].trim();
	} catch {
		// not Linux
	}
	return {
		cpuModel,
		cpus: os.availableParallelism?.() ?? os.cpus().length,
		memoryGb: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
		kernel: `${os.type()} ${os.release()}`,
		node: process.version,
	};
}

// ---------------------------------------------------------------------------------------------------------
// Summaries

export function median(values: number[]): number {
	const sorted = [...values].sort((a, b) => a - b);
	if (!sorted.length) return NaN;
	const mid = Math.floor(sorted.length / 2);
	return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** "7" when every run gave 7, "7-9" otherwise. */
export function range(values: number[]): string {
	if (!values.length) return '-';
	const min = Math.min(...values);
	const max = Math.max(...values);
	return min === max ? String(min) : `${min}-${max}`;
}

export const sleep = (ms: number) =>
	new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)));
