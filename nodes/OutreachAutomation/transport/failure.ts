/**
 * Why a request failed, declared on every error the pipeline builds (n8n-workflow's `Failure`), so
 * n8n's durable poll scheduler backs off for the right reason and time: it trusts a declared cause
 * before guessing from the HTTP shape, and would take a Base URL serving a web page for a blip.
 * Permanent causes (someone has to act) wait long; timed ones at least the declared wait.
 */
import type { Failure } from 'n8n-workflow';

import { MAX_SINGLE_WAIT_MS } from './constants';
import type { NetworkFailure } from './network';

/** What went wrong, as far as the pipeline saw it. */
export type Outcome =
	/** An HTTP answer that is an error: its status, and whether its body was the API's envelope. */
	| { kind: 'http'; status: number; envelope: boolean; resetAt?: number }
	/** The rate limit held out longer than a run waits, or than its retries allow. */
	| { kind: 'rateLimit'; resetAt?: number }
	/** No answer at all. */
	| { kind: 'network'; failure: NetworkFailure }
	/** An answer that is not the API's (not JSON, not the envelope), or an API that ignores paging. */
	| { kind: 'notTheApi' }
	/** Return All met no end within its bound: narrowing the request is up to the user. */
	| { kind: 'tooLong' }
	/** A list kept changing under its read past the bound on re-reads: a later run may pass. */
	| { kind: 'changing' };

function timed(
	cause: 'rate-limited' | 'quota-exhausted' | 'temporarily-unavailable',
	resetAt: number | undefined,
	now: number,
): Failure {
	if (resetAt === undefined) return { cause };
	return { cause, retryAfterMs: Math.max(0, resetAt - now), resetsAtEpochMs: resetAt };
}

/**
 * The one mapping from what went wrong to its declared cause:
 * - 401/403: `credential-invalid`;
 * - a 429 not waited out: `rate-limited`, or `quota-exhausted` when it resets later than a run
 *   waits (MAX_SINGLE_WAIT_MS), with the reset when known;
 * - 5xx, a 2xx `success: false`, a lost answer (timeout, reset, refused, a failed name lookup that
 *   may pass): `temporarily-unavailable`;
 * - a Base URL that is not the API (non-JSON or non-envelope answers, a 4xx outside the envelope, an
 *   unknown host, a TLS failure, a redirect) and a request the API refuses as configured (other 4xx):
 *   `configuration-invalid`.
 */
export function declaredFailure(outcome: Outcome, now = Date.now()): Failure {
	switch (outcome.kind) {
		case 'rateLimit': {
			const far = outcome.resetAt !== undefined && outcome.resetAt - now > MAX_SINGLE_WAIT_MS;
			return timed(far ? 'quota-exhausted' : 'rate-limited', outcome.resetAt, now);
		}
		case 'http': {
			const { status } = outcome;
			if (status === 401 || status === 403) return { cause: 'credential-invalid' };
			if (status === 429)
				return declaredFailure({ kind: 'rateLimit', resetAt: outcome.resetAt }, now);
			if (status >= 500) return { cause: 'temporarily-unavailable' };
			// The API reported an error without an error status: nothing says it lasts.
			if (status >= 200 && status < 300 && outcome.envelope)
				return { cause: 'temporarily-unavailable' };
			return { cause: 'configuration-invalid' };
		}
		case 'network': {
			const { kind, code } = outcome.failure;
			if (kind === 'tls') return { cause: 'configuration-invalid' };
			if (kind === 'unknownHost' && code !== 'EAI_AGAIN') return { cause: 'configuration-invalid' };
			return { cause: 'temporarily-unavailable' };
		}
		case 'notTheApi':
		case 'tooLong':
			return { cause: 'configuration-invalid' };
		case 'changing':
			return { cause: 'temporarily-unavailable' };
	}
}
