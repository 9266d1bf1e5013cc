/** Everything the pipeline assumes about the service, in one place. */

export const CREDENTIAL_TYPE = 'outreachAutomationApi';

/** Every endpoint lives under this path of the credential's Base URL. */
export const API_PREFIX = '/api/v1';

/** The page size the API documents as its maximum; never more is asked of a server known to clamp there. */
export const MAX_PAGE_SIZE = 100;

/** Return All first asks for this much per page: servers that allow it need 10x fewer requests. */
export const LARGE_PAGE_SIZE = 1000;

/** Return All gives up (with an error, never a short result) after this many page requests. */
export const MAX_PAGE_REQUESTS = 50_000;

/** Without rate-limit headers, pacing starts from the documented limit and learns from 429s. */
export const ASSUMED_RATE_LIMIT = 100;
export const ASSUMED_WINDOW_MS = 60_000;

/** A rate-limit window nobody used for this long is forgotten. */
export const WINDOW_IDLE_EXPIRY_MS = 15 * 60_000;

/**
 * How many times in a row a request rejected with 429 is tried again while no other request of its key
 * is answered (a key still answering is being paced, not refused), and the longest it waits in total.
 */
export const RATE_LIMIT_MAX_RETRIES = 6;
export const RATE_LIMIT_MAX_TOTAL_WAIT_MS = 5 * 60_000;

/** A single pause longer than this (e.g. a daily quota) fails instead of hanging the workflow. */
export const MAX_SINGLE_WAIT_MS = 5 * 60_000;

/** Added to every computed reset time: clocks and rounding differ by a few milliseconds. */
export const RESET_MARGIN_MS = 50;

/** 5xx and network errors on requests safe to repeat: attempts after the first, and their base delay. */
export const SERVER_ERROR_MAX_RETRIES = 3;
export const SERVER_ERROR_BASE_DELAY_MS = 500;
