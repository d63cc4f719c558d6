/**
 * The one table that decides whether a failed Cloud API send is worth retrying. Meta asks integrators to decide
 * on the Graph `error.code` rather than the HTTP status, so a known code wins; an unknown code falls back to the
 * status (5xx and 429 retryable, other 4xx not). Network errors and time-outs are always retryable: the
 * activity's retry policy spaces the attempts.
 *
 * Sources: Meta's "Error codes" page for the Cloud API and the Graph API error-handling guide.
 */
export const GRAPH_ERROR_CODES: Record<number, { retryable: boolean; title: string }> = {
  // Transient on Meta's side.
  1: { retryable: true, title: 'API unknown (possible server error)' },
  2: { retryable: true, title: 'API service temporarily unavailable' },
  131000: { retryable: true, title: 'Something went wrong' },
  131016: { retryable: true, title: 'Service unavailable' },
  133004: { retryable: true, title: 'Server temporarily unavailable' },
  // Throttling: the same request succeeds later.
  4: { retryable: true, title: 'API too many calls' },
  80007: { retryable: true, title: 'WhatsApp Business Account rate limit' },
  130429: { retryable: true, title: 'Cloud API throughput reached' },
  131048: { retryable: true, title: 'Spam rate limit hit' },
  131056: { retryable: true, title: 'Too many messages to this recipient (pair rate limit)' },
  // Authorization and permissions: a person must fix the configuration.
  0: { retryable: false, title: 'AuthException' },
  3: { retryable: false, title: 'API method / capability' },
  10: { retryable: false, title: 'Permission denied' },
  190: { retryable: false, title: 'Access token expired or invalid' },
  // The request itself is wrong.
  100: { retryable: false, title: 'Invalid parameter' },
  131008: { retryable: false, title: 'Required parameter missing' },
  131009: { retryable: false, title: 'Parameter value not valid' },
  132000: { retryable: false, title: 'Template parameter count mismatch' },
  132001: { retryable: false, title: 'Template does not exist' },
  132005: { retryable: false, title: 'Template hydrated text too long' },
  132007: { retryable: false, title: 'Template format character policy violated' },
  132012: { retryable: false, title: 'Template parameter format mismatch' },
  132015: { retryable: false, title: 'Template is paused' },
  132016: { retryable: false, title: 'Template is disabled' },
  132018: { retryable: false, title: 'Template parameter text has new lines, tabs or too many spaces' },
  // The recipient or the account cannot be messaged.
  131026: { retryable: false, title: 'Message undeliverable (recipient not on WhatsApp, or blocked)' },
  131047: { retryable: false, title: 'Re-engagement message outside the 24 h window' },
  131051: { retryable: false, title: 'Unsupported message type' },
  131031: { retryable: false, title: 'Business account locked' },
  131042: { retryable: false, title: 'Business eligibility payment issue' },
  131045: { retryable: false, title: 'Phone number not registered' },
  133010: { retryable: false, title: 'Phone number not registered with the Cloud API' },
  368: { retryable: false, title: 'Temporarily blocked for policy violations' },
};

/**
 * Meta's rate-limit answers: throughput reached (130429), pair rate limit (131056), spam rate limit (131048). A send
 * refused with one of them is marked on its message (`rate_limited_at`) and slows bulk sends down.
 */
export const RATE_LIMIT_CODES: readonly number[] = [130429, 131056, 131048];

export function isRetryableHttpStatus(status: number): boolean {
  return status >= 500 || status === 429 || status === 408;
}

/** Retryable when the Graph code says so; when the code is unknown (or absent), by the HTTP status. */
export function isRetryableGraphFailure(httpStatus: number, code: number | undefined): boolean {
  const known = code === undefined ? undefined : GRAPH_ERROR_CODES[code];
  return known ? known.retryable : isRetryableHttpStatus(httpStatus);
}
