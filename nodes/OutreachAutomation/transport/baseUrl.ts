import { API_PREFIX } from './constants';

const TRAILING_SLASHES = /\/+$/;
const API_SUFFIX = /\/api\/v1$/i;

/**
 * The host root of the service from the credential's Base URL: surrounding spaces, trailing
 * slashes and a pasted `/api/v1` suffix removed. The credential test does the same steps in an
 * n8n expression (CREDENTIAL_TEST_BASE_URL), so both reach the same address.
 */
export function normalizeBaseUrl(raw: unknown): string {
	const value = typeof raw === 'string' ? raw : '';
	return value.trim().replace(TRAILING_SLASHES, '').replace(API_SUFFIX, '');
}

/** The normalised Base URL when it is an http(s) address; undefined otherwise. */
export function checkedBaseUrl(raw: unknown): string | undefined {
	const value = normalizeBaseUrl(raw);
	return /^https?:\/\/[^\s/]+/i.test(value) ? value : undefined;
}

/**
 * normalizeBaseUrl as an expression, for the credential's declarative test request (which cannot
 * call code), with the API prefix appended. Built from the same patterns.
 */
export const CREDENTIAL_TEST_BASE_URL = `={{ String($credentials.baseUrl).trim().replace(${TRAILING_SLASHES}, "").replace(${API_SUFFIX}, "") }}${API_PREFIX}`;
