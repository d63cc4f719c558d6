import type { Knex } from '../db/knex.ts';
import { loginAttemptsStore, type LoginAttempts } from '../db/stores/admin-sessions-store.ts';

export interface ThrottlePolicy {
  /** Failures (counted from the last quiet period) that lock the bucket. */
  maxFailures: number;
  lockMs: number;
  /** Failures older than this are forgotten. */
  windowMs: number;
}

export const LOGIN_THROTTLE = {
  /** One account: 5 failures lock its sign-in for 15 minutes. */
  email: { maxFailures: 5, lockMs: 15 * 60_000, windowMs: 15 * 60_000 },
  /** One address trying many accounts; high enough for an office behind one NAT. */
  ip: { maxFailures: 50, lockMs: 15 * 60_000, windowMs: 15 * 60_000 },
} satisfies Record<string, ThrottlePolicy>;

export type LoginGate =
  { allowed: true; remainingAfterFailure: number; lockMinutes: number } | { allowed: false; retryAt: Date };

interface Bucket {
  name: string;
  policy: ThrottlePolicy;
}

function bucketsFor(email: string, ip: string): Bucket[] {
  return [
    { name: `email:${email.trim().toLowerCase()}`, policy: LOGIN_THROTTLE.email },
    { name: `ip:${ip}`, policy: LOGIN_THROTTLE.ip },
  ];
}

/** The counter as it stands at `now`: an expired lock or a quiet window starts it afresh. */
function current(row: LoginAttempts, policy: ThrottlePolicy, now: Date): LoginAttempts {
  const lockOver = row.lockedUntil !== null && row.lockedUntil.getTime() <= now.getTime();
  const quiet = now.getTime() - row.updatedAt.getTime() > policy.windowMs;
  return lockOver || (row.lockedUntil === null && quiet) ? { ...row, failures: 0, lockedUntil: null } : row;
}

/**
 * Admits a sign-in attempt, or refuses it while its email or address is locked. An admitted attempt is counted
 * as a failure *before* the password is checked (and forgiven by `settleLoginAttempt` when it succeeds), so a
 * burst of parallel guesses cannot slip past the limit while the slow password hash runs.
 */
export async function admitLoginAttempt(
  db: Knex,
  input: { email: string; ip: string; now: Date },
): Promise<LoginGate> {
  const buckets = bucketsFor(input.email, input.ip);
  return db.transaction(async (trx) => {
    const store = loginAttemptsStore(trx);
    const rows: LoginAttempts[] = [];
    // Always locked in the same order (email, then ip), so concurrent attempts cannot deadlock.
    for (const b of buckets)
      rows.push(current(await store.getForUpdate(b.name, input.now), b.policy, input.now));

    const locks = rows.flatMap((r) => (r.lockedUntil ? [r.lockedUntil.getTime()] : []));
    if (locks.length) return { allowed: false as const, retryAt: new Date(Math.max(...locks)) };

    let remaining = Infinity;
    for (const [i, b] of buckets.entries()) {
      const row = rows[i]!;
      const failures = row.failures + 1;
      const locked = failures >= b.policy.maxFailures;
      await store.put({
        bucket: row.bucket,
        failures,
        lockedUntil: locked ? new Date(input.now.getTime() + b.policy.lockMs) : null,
        updatedAt: input.now,
      });
      remaining = Math.min(remaining, b.policy.maxFailures - failures);
    }
    return {
      allowed: true as const,
      remainingAfterFailure: remaining,
      lockMinutes: Math.ceil(LOGIN_THROTTLE.email.lockMs / 60_000),
    };
  });
}

/** After the password check: success clears the account's counter and gives the address its attempt back. */
export async function settleLoginAttempt(
  db: Knex,
  input: { email: string; ip: string; success: boolean; now: Date },
): Promise<void> {
  if (!input.success) return;
  const [email, ip] = bucketsFor(input.email, input.ip) as [Bucket, Bucket];
  await db.transaction(async (trx) => {
    const store = loginAttemptsStore(trx);
    await store.clear(email.name);
    const row = await store.getForUpdate(ip.name, input.now);
    const failures = Math.max(0, row.failures - 1);
    await store.put({
      ...row,
      failures,
      lockedUntil: failures < ip.policy.maxFailures ? null : row.lockedUntil,
    });
  });
}
