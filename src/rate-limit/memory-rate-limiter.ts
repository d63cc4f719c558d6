import { toResult, windowStart, type RateLimiter } from './rate-limiter.ts';

/** Counts in this process only: right for one API process, the default. */
export function createMemoryRateLimiter(now: () => number = Date.now): RateLimiter {
  const windows = new Map<string, { start: number; count: number }>();
  let lastSweep = 0;
  return {
    hit(bucket, limit) {
      const t = now();
      const start = windowStart(t);
      if (start !== lastSweep) {
        for (const [k, w] of windows) if (w.start < start) windows.delete(k);
        lastSweep = start;
      }
      const w = windows.get(bucket);
      const count = w && w.start === start ? ++w.count : 1;
      if (count === 1) windows.set(bucket, { start, count });
      return Promise.resolve(toResult(count, limit, start));
    },
  };
}
