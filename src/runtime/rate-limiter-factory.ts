import type { Config } from '../config.ts';
import type { Db } from '../db/knex.ts';
import { createMemoryRateLimiter } from '../rate-limit/memory-rate-limiter.ts';
import { createPostgresRateLimiter } from '../rate-limit/postgres-rate-limiter.ts';
import type { RateLimiter } from '../rate-limit/rate-limiter.ts';

export function createRateLimiter(config: Config, db: Db): RateLimiter {
  return config.rateLimit.store === 'postgres' ? createPostgresRateLimiter(db) : createMemoryRateLimiter();
}
