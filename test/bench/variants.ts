/**
 * The bench's server variants: the same sandbox, reconfigured for one scenario (after its reset), to play a
 * spec-compatible server that makes another choice than the reference one.
 *
 *   headerless  no X-RateLimit-* headers at all (a proxy strips them): Lead > Create, many concurrent items
 *   coarse      X-RateLimit-Reset with 1-second resolution (integer epoch seconds, HTTP date): Lead > Create
 *   bigPages    a server allowing 1,000 per page: Lead > Get Many, Return All
 *
 * Each has its own rate limit and window where the bench's compressed one would not show what it is meant to
 * (see README.md, "Server variants").
 */
import type { SandboxConfig } from '../sandbox/server';

import type { Floor } from './measure';

export interface VariantSizes {
	/** Headerless: concurrent Lead > Create items, at rateLimit per windowMs (the server's, never told). */
	headerless: { items: number; rateLimit: number; windowMs: number };
	/**
	 * Coarse resets: Lead > Create items, at rateLimit per windowMs, reset headers in whole seconds; at most
	 * `runs` runs per header format (each takes about a minute in the full run).
	 */
	coarse: { items: number; rateLimit: number; windowMs: number; runs: number };
	/** Big pages: leads listed by Return All from a server allowing maxPerPage per page. */
	bigPages: { leads: number; maxPerPage: number };
}

export const VARIANTS_FULL: VariantSizes = {
	// The case: 300 concurrent creates against a server allowing 20 per second, saying nothing.
	headerless: { items: 300, rateLimit: 20, windowMs: 1_000 },
	// Whole-second headers cost up to a second per window that no client can win back: a window of 2 s (the
	// bench's compression) would make that second half the window. 10 s keeps it a tenth (a minute's window
	// makes it a sixtieth); 500 items at 100 per window as scenario 2, so 5 windows. --quick: 3 windows.
	coarse: { items: 500, rateLimit: 100, windowMs: 10_000, runs: 2 },
	bigPages: { leads: 10_000, maxPerPage: 1_000 },
};

export const VARIANTS_QUICK: VariantSizes = {
	headerless: { items: 100, rateLimit: 20, windowMs: 1_000 },
	coarse: { items: 60, rateLimit: 20, windowMs: 10_000, runs: 1 },
	bigPages: { leads: 2_000, maxPerPage: 1_000 },
};

/** The sandbox settings of each variant, applied after the reset before each run. */
export const headerlessConfig = (v: VariantSizes): Partial<SandboxConfig> => ({
	rateHeaders: 'none',
	rateLimit: v.headerless.rateLimit,
	windowMs: v.headerless.windowMs,
});

export type CoarseFormat = 'epoch-s' | 'http-date';
export const COARSE_FORMATS: CoarseFormat[] = ['epoch-s', 'http-date'];

export const coarseConfig = (v: VariantSizes, format: CoarseFormat): Partial<SandboxConfig> => ({
	resetFormat: format,
	rateLimit: v.coarse.rateLimit,
	windowMs: v.coarse.windowMs,
});

export const bigPagesConfig = (v: VariantSizes): Partial<SandboxConfig> => ({
	maxPerPage: v.bigPages.maxPerPage,
});

/**
 * The floor whole-second reset headers allow: a client cannot tell from "resets at second S" whether the
 * window ends just before S or up to a second later, so each window may cost up to a second more.
 */
export function coarseFloor(requestsMin: number, limit: number, windowMs: number): Floor {
	const windows = Math.max(1, Math.ceil(requestsMin / limit));
	return {
		windows,
		windowMs,
		slackPerWindowMs: 1_000,
		floorMs: windows * (windowMs + 1_000),
		strictMs: (windows - 1) * windowMs,
	};
}
