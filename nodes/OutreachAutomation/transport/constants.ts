/** Everything the pipeline assumes about the service, in one place. */

export const CREDENTIAL_TYPE = 'outreachAutomationApi';

/** Every endpoint lives under this path of the credential's Base URL. */
export const API_PREFIX = '/api/v1';

/** The largest page we ask for; the server may clamp it and says so in `meta.per_page`. */
export const MAX_PAGE_SIZE = 100;

/** How many times a request rejected with 429 is tried again, and the longest we wait in total. */
export const RATE_LIMIT_MAX_RETRIES = 6;
export const RATE_LIMIT_MAX_TOTAL_WAIT_MS = 5 * 60_000;

/** A single pause longer than this (e.g. a daily quota) fails instead of hanging the workflow. */
export const MAX_SINGLE_WAIT_MS = 5 * 60_000;

/** Added to every computed reset time: clocks and rounding differ by a few milliseconds. */
export const RESET_MARGIN_MS = 50;

/** 5xx and network errors on requests safe to repeat: attempts after the first, and their base delay. */
export const SERVER_ERROR_MAX_RETRIES = 3;
export const SERVER_ERROR_BASE_DELAY_MS = 500;
