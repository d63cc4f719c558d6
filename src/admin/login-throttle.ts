import type { Config } from '../config.ts';
import type { Knex } from '../db/knex.ts';
import { loginAttemptsStore, type LoginAttempts } from '../db/stores/admin-sessions-store.ts';

/**
 * Dashboard sign-in throttling by progressive delays, never by lock-out: after `freeFailures` failed attempts
 * of one email (or from one address), each further attempt must wait baseMs, then 2×, 4× … up to maxMs after
 * the previous one. An attempt inside the wait is refused without its password being checked; the right
 * password after the wait always signs in. So an attacker failing on someone's email from many addresses
 * slows the guessing to one try per maxMs, while the account holder waits at most maxMs.
 *
 * Counters live in PostgreSQL (`login_attempts`, one row per bucket), so every API process shares them.
 */
export interface ThrottlePolicy {
  /** Failures allowed without a wait. */
  freeFailures: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** Failures older than this are forgotten (at least maxDelayMs). */
  windowMs: number;
}

export interface LoginThrottlePolicy {
  /** One account, by the email typed (trimmed, lower-cased). */
  email: ThrottlePolicy;
  /** One client address trying many accounts; more lenient, for an office behind one NAT. */
  ip: ThrottlePolicy;
}

export function loginThrottlePolicy(login: Config['login']): LoginThrottlePolicy {
  const shared = { baseDelayMs: login.baseDelayMs, maxDelayMs: login.maxDelayMs, windowMs: login.windowMs };
  return {
    email: { ...shared, freeFailures: login.freeFailures.email },
    ip: { ...shared, freeFailures: login.freeFailures.ip },
  };
}

/** How long the next attempt must wait after `failures` failures: 0, …, 0, base, 2×base, 4×base … max. */
export function delayAfter(failures: number, policy: ThrottlePolicy): number {
  if (failures < policy.freeFailures) return 0;
  const doublings = Math.min(failures - policy.freeFailures, 40);
  return Math.min(policy.baseDelayMs * 2 ** doublings, policy.maxDelayMs);
}

export type LoginGate =
  | {
      allowed: true;
      /** If this attempt fails: the wait before the next one (0 when there is none). */
      delayAfterFailureMs: number;
      /** If this attempt fails: failures still allowed before attempts have to wait. */
      freeAttemptsLeft: number;
    }
  | { allowed: false; retryAt: Date };

interface Bucket {
  name: string;
  policy: ThrottlePolicy;
}

function bucketsFor(email: string, ip: string, policy: LoginThrottlePolicy): [Bucket, Bucket] {
  return [
    { name: `email:${email.trim().toLowerCase()}`, policy: policy.email },
    { name: `ip:${ip}`, policy: policy.ip },
  ];
}

/** The counter as it stands at `now`: after a quiet window it starts afresh. */
function current(row: LoginAttempts, policy: ThrottlePolicy, now: Date): LoginAttempts {
  const quiet = now.getTime() - row.updatedAt.getTime() > policy.windowMs;
  const waiting = row.lockedUntil !== null && row.lockedUntil.getTime() > now.getTime();
  return quiet && !waiting ? { ...row, failures: 0, lockedUntil: null } : row;
}

/**
 * Admits a sign-in attempt, or refuses it while its email or address must still wait (a refused attempt
 * changes nothing, so hammering does not lengthen the wait). An admitted attempt is counted as a failure, and
 * starts the next wait, *before* the password is checked (`settleLoginAttempt` forgives it when it succeeds),
 * so a burst of parallel guesses cannot slip past the delays while the slow password hash runs.
 */
export async function admitLoginAttempt(
  db: Knex,
  policy: LoginThrottlePolicy,
  input: { email: string; ip: string; now: Date },
): Promise<LoginGate> {
  const buckets = bucketsFor(input.email, input.ip, policy);
  return db.transaction(async (trx) => {
    const store = loginAttemptsStore(trx);
    const rows: LoginAttempts[] = [];
    // Always locked in the same order (email, then ip), so concurrent attempts cannot deadlock.
    for (const b of buckets)
      rows.push(current(await store.getForUpdate(b.name, input.now), b.policy, input.now));

    const waits = rows.flatMap((r) =>
      r.lockedUntil && r.lockedUntil.getTime() > input.now.getTime() ? [r.lockedUntil.getTime()] : [],
    );
    if (waits.length) return { allowed: false as const, retryAt: new Date(Math.max(...waits)) };

    let delayAfterFailureMs = 0;
    let freeAttemptsLeft = Infinity;
    for (const [i, b] of buckets.entries()) {
      const failures = rows[i]!.failures + 1;
      const delay = delayAfter(failures, b.policy);
      await store.put({
        bucket: b.name,
        failures,
        lockedUntil: delay > 0 ? new Date(input.now.getTime() + delay) : null,
        updatedAt: input.now,
      });
      delayAfterFailureMs = Math.max(delayAfterFailureMs, delay);
      freeAttemptsLeft = Math.min(freeAttemptsLeft, Math.max(0, b.policy.freeFailures - failures));
    }
    return { allowed: true as const, delayAfterFailureMs, freeAttemptsLeft };
  });
}

/** After the password check: success clears the account's counter and gives the address its attempt back. */
export async function settleLoginAttempt(
  db: Knex,
  policy: LoginThrottlePolicy,
  input: { email: string; ip: string; success: boolean; now: Date },
): Promise<void> {
  if (!input.success) return;
  const [email, ip] = bucketsFor(input.email, input.ip, policy);
  await db.transaction(async (trx) => {
    const store = loginAttemptsStore(trx);
    await store.clear(email.name);
    const row = await store.getForUpdate(ip.name, input.now);
    const failures = Math.max(0, row.failures - 1);
    // The wait this attempt started is lifted only when the address is back among its free failures.
    await store.put({
      ...row,
      failures,
      lockedUntil: failures < ip.policy.freeFailures ? null : row.lockedUntil,
    });
  });
}
