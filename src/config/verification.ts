import { z } from 'zod';
import { defineSlice } from './slice.ts';

export interface VerificationConfig {
  /** The public verification page: per client address and minute (page and check), and the check's upload limit. */
  verification: { requestsPerMinute: number; checkMaxBytes: number };
}

export const verificationSlice = defineSlice({
  title: 'Public verification page',
  about: '/v/{token} (docs/signed-pdf.md "Verification page").',
  env: {
    VERIFY_RATE_LIMIT_PER_MINUTE: z.coerce
      .number()
      .int()
      .min(1)
      .max(100_000)
      .default(60)
      .describe('page views and file checks per client address and minute (429 + Retry-After past it)'),
    VERIFY_CHECK_MAX_MB: z.coerce
      .number()
      .positive()
      .max(1024)
      .default(64)
      .describe('the largest PDF POST /v/{token}/check hashes (the fallback when the browser cannot hash)'),
  },
  build: (e): VerificationConfig => ({
    verification: {
      requestsPerMinute: e.VERIFY_RATE_LIMIT_PER_MINUTE,
      checkMaxBytes: Math.round(e.VERIFY_CHECK_MAX_MB * 1024 * 1024),
    },
  }),
});
