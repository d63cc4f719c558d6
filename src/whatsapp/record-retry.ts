import { setTimeout as sleep } from 'node:timers/promises';
import type { RecordRetry } from './types.ts';

/** Used when the caller gives none: three tries, 200 ms then 400 ms apart. */
export const DEFAULT_RECORD_RETRY: RecordRetry = { attempts: 3, backoffMs: 200 };

/** The waits between the tries: backoffMs, 2×backoffMs, 4×backoffMs …, one fewer than the tries. */
export function retryDelays(retry: RecordRetry): number[] {
  const attempts = Math.max(1, Math.floor(retry.attempts));
  return Array.from({ length: attempts - 1 }, (_, i) => Math.max(0, retry.backoffMs) * 2 ** i);
}

/**
 * Runs `work` until it succeeds or the tries run out, waiting between tries; the last error is thrown.
 * `onRetry` hears each failure that is followed by another try.
 */
export async function withRetries<T>(
  work: () => Promise<T>,
  retry: RecordRetry,
  onRetry?: (err: unknown, attempt: number, delayMs: number) => void,
  wait: (ms: number) => Promise<unknown> = sleep,
): Promise<T> {
  const delays = retryDelays(retry);
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (err) {
      const delay = delays[attempt - 1];
      if (delay === undefined) throw err;
      onRetry?.(err, attempt, delay);
      await wait(delay);
    }
  }
}
