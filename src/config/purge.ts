import { z } from 'zod';
import { defineSlice } from './slice.ts';

export interface PurgeConfig {
  /** Each API process deletes stale rows (sign-in counters, idempotency keys, admin sessions) this often. */
  purge: { intervalMs: number; batchSize: number; maxBatches: number };
}

export const purgeSlice = defineSlice({
  title: 'Purge of stale rows',
  about: 'Each API process deletes stale sign-in counters, idempotency keys and admin sessions.',
  env: {
    PURGE_INTERVAL_MINUTES: z.coerce.number().gt(0).max(1440).default(60).describe('how often'),
    PURGE_BATCH_SIZE: z.coerce
      .number()
      .int()
      .min(1)
      .max(100_000)
      .default(1000)
      .describe('rows deleted per statement'),
    PURGE_MAX_BATCHES: z.coerce
      .number()
      .int()
      .min(1)
      .max(10_000)
      .default(100)
      .describe('statements per table and run; the rest waits for the next run'),
  },
  build: (e): PurgeConfig => ({
    purge: {
      intervalMs: Math.round(e.PURGE_INTERVAL_MINUTES * 60_000),
      batchSize: e.PURGE_BATCH_SIZE,
      maxBatches: e.PURGE_MAX_BATCHES,
    },
  }),
});
