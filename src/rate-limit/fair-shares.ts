import { z } from 'zod';

/**
 * What one account may take of what all accounts share, so that no account can multiply its limits or starve the
 * others (docs/security.md, "Fair shares"). Read once by src/config.ts from these variables.
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

const count = (max: number) => z.coerce.number().int().min(1).max(max);

/** The environment variables, merged into the configuration schema. */
export const fairShareEnv = {
  API_KEYS_MAX_PER_ACCOUNT: count(1000).default(FAIR_SHARE_DEFAULTS.maxActiveKeys),
  RATE_LIMIT_ACCOUNT_MULTIPLIER: count(100).default(FAIR_SHARE_DEFAULTS.accountRateMultiplier),
  UPLOADS_MAX_IN_FLIGHT: count(10_000).default(FAIR_SHARE_DEFAULTS.uploadsInFlight),
  UPLOADS_MAX_IN_FLIGHT_PER_ACCOUNT: count(10_000).default(FAIR_SHARE_DEFAULTS.uploadsInFlightPerAccount),
};

type FairShareEnv = { [K in keyof typeof fairShareEnv]: number };

export function fairSharesFromEnv(e: FairShareEnv): { fairShares: FairShares; issues: string[] } {
  const issues =
    e.UPLOADS_MAX_IN_FLIGHT_PER_ACCOUNT > e.UPLOADS_MAX_IN_FLIGHT
      ? [
          'UPLOADS_MAX_IN_FLIGHT_PER_ACCOUNT: must be at most UPLOADS_MAX_IN_FLIGHT (one account’s part of the whole)',
        ]
      : [];
  return {
    fairShares: {
      maxActiveKeys: e.API_KEYS_MAX_PER_ACCOUNT,
      accountRateMultiplier: e.RATE_LIMIT_ACCOUNT_MULTIPLIER,
      uploadsInFlight: e.UPLOADS_MAX_IN_FLIGHT,
      uploadsInFlightPerAccount: e.UPLOADS_MAX_IN_FLIGHT_PER_ACCOUNT,
    },
    issues,
  };
}
