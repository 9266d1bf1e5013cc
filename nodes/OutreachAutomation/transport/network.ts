/**
 * What kind of network failure a request met, read from the error n8n's HTTP helper threw (the
 * low-level code sits somewhere on its cause chain), so the user is told what to fix.
 */

export type NetworkKind = 'timeout' | 'refused' | 'unknownHost' | 'tls' | 'reset' | 'other';

export interface NetworkFailure {
	kind: NetworkKind;
	/** The low-level code (ECONNREFUSED, DEPTH_ZERO_SELF_SIGNED_CERT...), or "network error". */
	code: string;
}

/** Certificate and handshake failures, in the user's words ("its certificate is self-signed"). */
const TLS_PROBLEMS: Record<string, string> = {
	DEPTH_ZERO_SELF_SIGNED_CERT: 'its certificate is self-signed',
	SELF_SIGNED_CERT_IN_CHAIN: 'its certificate chain is self-signed',
	UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'its certificate is signed by an authority n8n does not trust',
	UNABLE_TO_GET_ISSUER_CERT: 'its certificate is signed by an authority n8n does not trust',
	UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'its certificate is signed by an authority n8n does not trust',
	CERT_HAS_EXPIRED: 'its certificate has expired',
	CERT_NOT_YET_VALID: 'its certificate is not valid yet',
	CERT_REVOKED: 'its certificate was revoked',
	ERR_TLS_CERT_ALTNAME_INVALID: 'its certificate is for another host name',
	EPROTO: 'it does not speak TLS (HTTPS) on this port',
	ERR_SSL_WRONG_VERSION_NUMBER: 'it does not speak TLS (HTTPS) on this port',
};

const TIMEOUT_CODES = new Set(['ETIMEDOUT', 'ESOCKETTIMEDOUT', 'ERR_TIMEOUT']);
const RESET_CODES = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'ERR_STREAM_PREMATURE_CLOSE']);

/** The words for a TLS failure's code, or undefined when the code is not a TLS one. */
export function tlsProblem(code: string): string | undefined {
	if (TLS_PROBLEMS[code]) return TLS_PROBLEMS[code];
	if (/^(ERR_SSL_|ERR_TLS_|CERT_)/.test(code)) return 'the TLS handshake failed';
	return undefined;
}

/** Codes and messages along the cause chain, outermost first. */
function chain(error: unknown): { codes: string[]; messages: string[] } {
	const codes: string[] = [];
	const messages: string[] = [];
	const seen = new Set<unknown>();
	let current: unknown = error;
	while (current && typeof current === 'object' && !seen.has(current)) {
		seen.add(current);
		const { code, message } = current as { code?: unknown; message?: unknown };
		if (typeof code === 'string' && /^[A-Z][A-Z0-9_]+$/.test(code)) codes.push(code);
		if (typeof message === 'string') messages.push(message);
		current = (current as { cause?: unknown }).cause;
	}
	return { codes, messages };
}

/** Classifies a failure of n8n's HTTP helper that came without any HTTP answer. */
export function networkFailure(error: unknown): NetworkFailure {
	const { codes, messages } = chain(error);
	const code = codes[0] ?? (messages.some((m) => /socket hang up/i.test(m)) ? 'ECONNRESET' : '');
	// axios reports its own timeout as ECONNABORTED "timeout of 2000ms exceeded".
	if (
		TIMEOUT_CODES.has(code) ||
		(code === 'ECONNABORTED' && messages.some((m) => /timeout/i.test(m)))
	)
		return { kind: 'timeout', code };
	if (code === 'ECONNREFUSED') return { kind: 'refused', code };
	if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_NONAME')
		return { kind: 'unknownHost', code };
	if (tlsProblem(code)) return { kind: 'tls', code };
	if (RESET_CODES.has(code)) return { kind: 'reset', code };
	return { kind: 'other', code: code || 'network error' };
}
