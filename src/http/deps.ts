import type { SecretBox } from '../auth/secret-box.ts';
import type { Config } from '../config.ts';
import type { Knex } from '../db/knex.ts';
import type { Logger } from '../logger.ts';
import type { PrecompressedAssets } from './precompressed.ts';
import type { HttpMetrics } from '../metrics/metrics.ts';
import type { RateLimiter } from '../rate-limit/rate-limiter.ts';
import type { Storage } from '../storage/storage.ts';
import type { TemporalClientHandle } from '../temporal/client.ts';

/** Everything the HTTP layer needs, handed in by whoever builds the app (main, tests, benchmarks). */
export interface ApiDeps {
  config: Config;
  db: Knex;
  temporal: TemporalClientHandle;
  logger: Logger;
  rateLimiter: RateLimiter;
  storage: Storage;
  /** Seals and opens the secrets stored for reading back (`secretBoxFromSettings(config.encryption)`). */
  secrets: SecretBox;
  /** Request durations by route template and status; absent, nothing is counted. */
  metrics?: HttpMetrics;
  /** The public pages' compressed assets; the API server makes them at start-up (absent, each on first need). */
  pageAssets?: PrecompressedAssets;
}
