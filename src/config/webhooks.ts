import { z } from 'zod';
import { bool } from './fields.ts';
import { defineSlice } from './slice.ts';

export interface WebhooksConfig {
  webhooks: {
    /** Lets webhooks reach loopback and private addresses: development and tests only. */
    allowPrivate: boolean;
    timeoutMs: number;
    /** Multiplies every retry delay; below 1 only in tests. */
    retryScale: number;
  };
}

export const webhooksSlice = defineSlice({
  title: 'Webhooks',
  about: 'Deliveries to the receivers accounts register (docs/webhooks.md).',
  env: {
    WEBHOOK_ALLOW_PRIVATE: bool
      .default(false)
      .describe(
        'true lets webhook URLs call loopback and private addresses: development and tests only (refused at start-up when NODE_ENV=production)',
      ),
    WEBHOOK_TIMEOUT_MS: z.coerce
      .number()
      .int()
      .min(100)
      .max(60_000)
      .default(10_000)
      .describe('how long one delivery attempt waits for the receiver'),
    WEBHOOK_RETRY_SCALE: z.coerce
      .number()
      .gt(0)
      .max(1)
      .default(1)
      .describe("multiplies the retry schedule's delays; below 1 only to test retries quickly"),
  },
  checks: {
    production: (e, ctx) =>
      ctx.nodeEnv === 'production' && e.WEBHOOK_ALLOW_PRIVATE
        ? [
            'WEBHOOK_ALLOW_PRIVATE: true lets webhooks reach loopback and private addresses; it is for development and tests, not NODE_ENV=production',
          ]
        : [],
  },
  build: (e): WebhooksConfig => ({
    webhooks: {
      allowPrivate: e.WEBHOOK_ALLOW_PRIVATE,
      timeoutMs: e.WEBHOOK_TIMEOUT_MS,
      retryScale: e.WEBHOOK_RETRY_SCALE,
    },
  }),
});
