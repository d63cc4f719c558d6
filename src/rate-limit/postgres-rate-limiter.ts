import type { Db } from '../db/knex.ts';
import { toResult, windowStart, WINDOW_MS, type RateLimiter } from './rate-limiter.ts';

/**
 * One row per bucket and window, incremented atomically with an upsert, so every API process sharing the
 * database enforces one limit per key. Old windows are swept once a minute.
 */
export function createPostgresRateLimiter(db: Db, now: () => number = Date.now): RateLimiter {
  let lastSweep = 0;
  return {
    async hit(bucket, limit) {
      const start = windowStart(now());
      if (start !== lastSweep) {
        lastSweep = start;
        await db('rate_limit_windows')
          .where('window_start', '<', new Date(start - WINDOW_MS))
          .delete();
      }
      const result = await db.raw<{ rows: { count: number }[] }>(
        `INSERT INTO rate_limit_windows (bucket, window_start, count) VALUES (?, ?, 1)
         ON CONFLICT (bucket, window_start) DO UPDATE SET count = rate_limit_windows.count + 1
         RETURNING count`,
        [bucket, new Date(start)],
      );
      return toResult(result.rows[0]!.count, limit, start);
    },
  };
}
