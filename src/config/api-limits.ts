import { z } from 'zod';
import { PLAN_REQUESTS_PER_MINUTE, PLANS, type Plan } from '../domain/plans.ts';
import { intIn } from './fields.ts';
import { defineSlice } from './slice.ts';

/**
 * What one account may take of what all accounts share, so that no account can multiply its limits or starve the
 * others (docs/security.md, "Fair shares").
 */
export interface FairShares {
  /** Active (unrevoked) API keys an account may hold; creating one more is a 422. */
  maxActiveKeys: number;
  /** An account's requests per minute, all its keys together: this many times its plan's per-key limit. */
  accountRateMultiplier: number;
  /** Document uploads (multipart POST/PUT) being received or checked at once in one API process. */
  uploadsInFlight: number;
  /** ... of which one account may have this many. */
  uploadsInFlightPerAccount: number;
}

export const FAIR_SHARE_DEFAULTS = {
  maxActiveKeys: 10,
  accountRateMultiplier: 3,
  uploadsInFlight: 16,
  uploadsInFlightPerAccount: 4,
} as const;

export interface ApiLimitsConfig {
  rateLimit: { store: 'memory' | 'postgres' };
  /** How long an authenticated key is kept in memory without a notice (0: not at all). */
  apiKeyCacheTtlMs: number;
  plans: Record<Plan, { requestsPerMinute: number; maxUploadBytes: number }>;
  /** One account's part of what all accounts share: keys, requests per minute on top of the plan's, uploads. */
  fairShares: FairShares;
}

const count = (max: number) => z.coerce.number().int().min(1).max(max);
const uploadMb = (plan: Plan) =>
  z.coerce.number().positive().max(1024).default(20).describe(`the upload limit of the ${plan} plan, in MB`);
const mb = (n: number) => Math.floor(n * 1024 * 1024);

export const apiLimitsSlice = defineSlice({
  title: 'API limits',
  about: `Requests per minute and API key by plan: ${PLANS.map((p) => `${p} ${PLAN_REQUESTS_PER_MINUTE[p]}`).join(', ')}. Fair shares between accounts (docs/security.md): what one account may take of what all accounts share.`,
  env: {
    RATE_LIMIT_STORE: z
      .enum(['memory', 'postgres'])
      .default('memory')
      .describe('memory (one API process) | postgres (limits shared by several API processes)'),
    API_KEY_CACHE_TTL_MS: intIn(0, 3_600_000)
      .default(60_000)
      .describe(
        'how long an API process keeps a key it authenticated; a change to the key (revocation) drops it at once on every process (0: read PostgreSQL each request)',
      ),
    API_KEYS_MAX_PER_ACCOUNT: count(1000)
      .default(FAIR_SHARE_DEFAULTS.maxActiveKeys)
      .describe('active API keys per account (1-1000); creating one more is a 422'),
    RATE_LIMIT_ACCOUNT_MULTIPLIER: count(100)
      .default(FAIR_SHARE_DEFAULTS.accountRateMultiplier)
      .describe(
        "an account's requests per minute, all keys together: this many times its plan's per-key limit (1-100)",
      ),
    UPLOADS_MAX_IN_FLIGHT: count(10_000)
      .default(FAIR_SHARE_DEFAULTS.uploadsInFlight)
      .describe(
        'document uploads being received or checked at once per API process; past it 503 + Retry-After',
      ),
    UPLOADS_MAX_IN_FLIGHT_PER_ACCOUNT: count(10_000)
      .default(FAIR_SHARE_DEFAULTS.uploadsInFlightPerAccount)
      .describe('...of which one account may have this many (at most UPLOADS_MAX_IN_FLIGHT)'),
    MAX_UPLOAD_MB_BASIC: uploadMb('basic'),
    MAX_UPLOAD_MB_BUSINESS: uploadMb('business'),
    MAX_UPLOAD_MB_ENTERPRISE: uploadMb('enterprise'),
  },
  checks: {
    'fair-shares': (e) =>
      e.UPLOADS_MAX_IN_FLIGHT_PER_ACCOUNT > e.UPLOADS_MAX_IN_FLIGHT
        ? [
            'UPLOADS_MAX_IN_FLIGHT_PER_ACCOUNT: must be at most UPLOADS_MAX_IN_FLIGHT (one account’s part of the whole)',
          ]
        : [],
  },
  build: (e): ApiLimitsConfig => ({
    rateLimit: { store: e.RATE_LIMIT_STORE },
    apiKeyCacheTtlMs: e.API_KEY_CACHE_TTL_MS,
    plans: {
      basic: { requestsPerMinute: PLAN_REQUESTS_PER_MINUTE.basic, maxUploadBytes: mb(e.MAX_UPLOAD_MB_BASIC) },
      business: {
        requestsPerMinute: PLAN_REQUESTS_PER_MINUTE.business,
        maxUploadBytes: mb(e.MAX_UPLOAD_MB_BUSINESS),
      },
      enterprise: {
        requestsPerMinute: PLAN_REQUESTS_PER_MINUTE.enterprise,
        maxUploadBytes: mb(e.MAX_UPLOAD_MB_ENTERPRISE),
      },
    },
    fairShares: {
      maxActiveKeys: e.API_KEYS_MAX_PER_ACCOUNT,
      accountRateMultiplier: e.RATE_LIMIT_ACCOUNT_MULTIPLIER,
      uploadsInFlight: e.UPLOADS_MAX_IN_FLIGHT,
      uploadsInFlightPerAccount: e.UPLOADS_MAX_IN_FLIGHT_PER_ACCOUNT,
    },
  }),
});
