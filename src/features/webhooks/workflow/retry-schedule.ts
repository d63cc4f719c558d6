/**
 * The Standard Webhooks retry schedule (docs/product-rules.md §7): the first attempt immediately, then retries
 * after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h; after the eighth attempt fails the delivery is `failed`. Pure
 * and import-free, so the delivery workflow can use it inside Temporal's deterministic sandbox.
 */

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** RETRY_DELAYS_MS[i] is the wait before attempt i + 1 (attempt 1 waits 0). */
export const RETRY_DELAYS_MS: readonly number[] = Object.freeze([
  0,
  5 * SECOND,
  5 * MINUTE,
  30 * MINUTE,
  2 * HOUR,
  5 * HOUR,
  10 * HOUR,
  10 * HOUR,
]);

export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length;

/** The largest step of the schedule: a receiver's Retry-After never pushes a retry further than this. */
export const MAX_RETRY_DELAY_MS = Math.max(...RETRY_DELAYS_MS);

export interface ScheduleOptions {
  /** Multiplies every delay (Retry-After included); tests pass e.g. 0.001 to turn hours into seconds. */
  scale?: number;
}

/**
 * How long to wait after attempt `attemptNumber` (1-based) failed before the next one, or undefined when that was
 * the last attempt. A receiver's Retry-After (429/503) is honoured within the schedule's bounds: never sooner than
 * the scheduled delay, never later than the largest step.
 */
export function nextAttemptDelay(
  attemptNumber: number,
  retryAfterMs?: number,
  options: ScheduleOptions = {},
): number | undefined {
  if (!Number.isInteger(attemptNumber) || attemptNumber < 1) {
    throw new RangeError(`attemptNumber must be an integer from 1, got ${attemptNumber}`);
  }
  const scheduled = RETRY_DELAYS_MS[attemptNumber];
  if (scheduled === undefined) return undefined;
  const wanted =
    retryAfterMs !== undefined && Number.isFinite(retryAfterMs)
      ? Math.min(retryAfterMs, MAX_RETRY_DELAY_MS)
      : 0;
  const scale = options.scale ?? 1;
  if (!(scale >= 0) || !Number.isFinite(scale)) throw new RangeError(`scale must be a finite number >= 0`);
  return Math.round(Math.max(scheduled, wanted) * scale);
}
