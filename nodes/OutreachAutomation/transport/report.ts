/**
 * What one node run spent on the rate limit, for the execution hint shown with its output and for
 * n8n's log: how long its requests waited, how many 429s were waited out and sent again, how many
 * gave up, and what set the pace. Kept per n8n context (one node run) in O(1) memory.
 */
import type { Logger } from 'n8n-workflow';

import { peekWindow } from './pacing';

interface Report {
	/** Requests of this run waiting for a slot now, and since when at least one has been. */
	waiting: number;
	since: number;
	/** Time during which at least one request of this run waited (overlapping waits counted once). */
	waitedMs: number;
	retried429: number;
	gaveUp: number;
	key: string | undefined;
	/** When a long wait was last written to n8n's log (one line a minute at most). */
	loggedAt: number;
}

/** A single wait this long goes to n8n's log too. */
const LOG_WAIT_MS = 10_000;
const LOG_EVERY_MS = 60_000;
/** Shorter waits are the ordinary spacing of requests: no hint. */
const HINT_WAIT_MS = 1000;

const reports = new WeakMap<object, Report>();

function reportOf(ctx: object): Report {
	let report = reports.get(ctx);
	if (!report) {
		report = {
			waiting: 0,
			since: 0,
			waitedMs: 0,
			retried429: 0,
			gaveUp: 0,
			key: undefined,
			loggedAt: 0,
		};
		reports.set(ctx, report);
	}
	return report;
}

/** A request of this run begins to wait for a slot of `key`. */
export function waitBegins(ctx: object, key: string): void {
	const report = reportOf(ctx);
	report.key = key;
	if (report.waiting++ === 0) report.since = Date.now();
}

/** It has its slot (or gave up): `startedAt` is when it began to wait. */
export function waitEnds(ctx: object, startedAt: number, logger: Logger | undefined): void {
	const report = reportOf(ctx);
	const now = Date.now();
	if (--report.waiting === 0) report.waitedMs += now - report.since;
	const waited = now - startedAt;
	if (waited >= LOG_WAIT_MS && now - report.loggedAt >= LOG_EVERY_MS && report.key) {
		report.loggedAt = now;
		logger?.info(
			`Outreach Automation: a request waited ${duration(waited)} for the API's rate limit (${describePace(report.key)})`,
		);
	}
}

/** A 429 was waited out and the request is sent again. */
export function retriedAfter429(ctx: object): void {
	reportOf(ctx).retried429++;
}

/** A request gave up on the rate limit (its reset was further than the node waits). */
export function gaveUpOnRateLimit(ctx: object): void {
	reportOf(ctx).gaveUp++;
}

/** "850 ms", "4.2 s", "3 min 5 s". */
export function duration(ms: number): string {
	if (ms < 1000) return `${Math.round(ms)} ms`;
	if (ms < 60_000) return `${Number((ms / 1000).toFixed(1))} s`;
	const minutes = Math.floor(ms / 60_000);
	const seconds = Math.round((ms % 60_000) / 1000);
	return seconds ? `${minutes} min ${seconds} s` : `${minutes} min`;
}

/**
 * The hint for a node run that waited for the rate limit, or undefined when it did not (noticeably).
 * Reading it ends the run's report.
 */
export function pacingHint(ctx: object): string | undefined {
	const report = reports.get(ctx);
	reports.delete(ctx);
	if (!report || !report.key) return undefined;
	if (report.waitedMs < HINT_WAIT_MS && !report.retried429 && !report.gaveUp) return undefined;
	const parts = [`Waited ${duration(report.waitedMs)} for the API's rate limit`];
	if (report.retried429)
		parts.push(
			`${report.retried429} request${report.retried429 === 1 ? ' was' : 's were'} answered 429 (too many requests), waited out and sent again`,
		);
	if (report.gaveUp)
		parts.push(
			`${report.gaveUp} request${report.gaveUp === 1 ? '' : 's'} gave up: the limit resets later than the node waits (5 min)`,
		);
	return `${parts.join('; ')}. Pace set by ${describePace(report.key)}.`;
}

/** What sets the pace of a key, in a user's words. */
function describePace(name: string): string {
	const window = peekWindow(name);
	if (!window) return "the API key's limit";
	if (window.unpaced) {
		const { budget, spanMs, learnt } = window.span;
		return (
			`a server that sends no rate-limit headers: about ${budget} requests per ${Math.round(spanMs / 1000)} s, ` +
			(learnt ? 'learnt from its 429 answers' : 'as the API documents')
		);
	}
	const others = Math.round(window.share.sharers) - 1;
	const limit = window.limit ? ` of ${window.limit} requests per window` : '';
	return (
		`the API key's limit${limit}` +
		(others >= 1 ? `, shared with about ${others} other process${others === 1 ? '' : 'es'}` : '')
	);
}
