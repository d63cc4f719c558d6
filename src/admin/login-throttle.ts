import { isIPv6 } from 'node:net';
import type { Config } from '../config.ts';
import type { Knex } from '../db/knex.ts';
import { loginAttemptsStore, type LoginAttempts } from '../db/stores/admin-sessions-store.ts';

/**
 * Dashboard sign-in throttling by progressive delays, never by lock-out: after `freeFailures` failed attempts
 * of one email (or from one address), each further attempt must wait baseMs, then 2×, 4× … up to maxMs after
 * the previous one. An attempt inside the wait is refused without its password being checked; the right
 * password after the wait always signs in. So an attacker failing on someone's email from many addresses
 * slows the guessing to one try per maxMs, while the account holder waits at most maxMs. The second step
 * (a code after the right password) has counters of its own, per account, so knowing the password buys no
 * faster guessing of codes; both steps also count for the client's address.
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
  /**
   * One client address trying many accounts, at either step; more lenient, for an office behind one NAT. An
   * IPv6 client counts by its /64 (one subscriber's network hands out any address inside it).
   */
  ip: ThrottlePolicy;
  /** One account's second step: codes tried after the right password, whatever the address. */
  code: ThrottlePolicy;
}

export function loginThrottlePolicy(login: Config['login']): LoginThrottlePolicy {
  const shared = { baseDelayMs: login.baseDelayMs, maxDelayMs: login.maxDelayMs, windowMs: login.windowMs };
  return {
    email: { ...shared, freeFailures: login.freeFailures.email },
    ip: { ...shared, freeFailures: login.freeFailures.ip },
    code: { ...shared, freeFailures: login.freeFailures.code },
  };
}

/** The first `count` groups of an IPv6 address, in canonical hex (`2001:db8:0:0`). */
function ipv6Groups(address: string, count: number): string[] {
  const bare = address.split('%')[0]!.toLowerCase();
  const [head = '', tail] = bare.split('::');
  const split = (part: string) => (part ? part.split(':') : []);
  // An embedded IPv4 tail (…:192.0.2.1) fills two groups.
  const width = (groups: string[]) => groups.reduce((n, g) => n + (g.includes('.') ? 2 : 1), 0);
  const left = split(head);
  const right = tail === undefined ? [] : split(tail);
  const zeros = Array.from({ length: 8 - width(left) - width(right) }, () => '0');
  return [...left, ...zeros, ...right].slice(0, count).map((g) => parseInt(g, 16).toString(16));
}

/**
 * The address a counter is kept for: an IPv4-mapped IPv6 address (`::ffff:192.0.2.1`, what a dual-stack socket
 * reports for an IPv4 client) is its IPv4 address, and an IPv6 address is its /64 network.
 */
export function addressKey(ip: string): string {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(ip);
  if (mapped) return mapped[1]!;
  if (!isIPv6(ip.split('%')[0]!)) return ip;
  return `${ipv6Groups(ip, 4).join(':')}::/64`;
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

/** The account's bucket first, then the address's: always locked in this order, so no two attempts deadlock. */
type Buckets = [account: Bucket, address: Bucket];

function passwordBuckets(email: string, ip: string, policy: LoginThrottlePolicy): Buckets {
  return [
    { name: `email:${email.trim().toLowerCase()}`, policy: policy.email },
    { name: `ip:${addressKey(ip)}`, policy: policy.ip },
  ];
}

function codeBuckets(accountId: string, ip: string, policy: LoginThrottlePolicy): Buckets {
  return [
    { name: `code:${accountId}`, policy: policy.code },
    { name: `ip:${addressKey(ip)}`, policy: policy.ip },
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
export function admitLoginAttempt(
  db: Knex,
  policy: LoginThrottlePolicy,
  input: { email: string; ip: string; now: Date },
): Promise<LoginGate> {
  return admit(db, passwordBuckets(input.email, input.ip, policy), input.now);
}

/**
 * The same for a code at the second step, counted for the account (however many sign-ins and addresses it
 * comes through) and for the address.
 */
export function admitCodeAttempt(
  db: Knex,
  policy: LoginThrottlePolicy,
  input: { accountId: string; ip: string; now: Date },
): Promise<LoginGate> {
  return admit(db, codeBuckets(input.accountId, input.ip, policy), input.now);
}

async function admit(db: Knex, buckets: Buckets, now: Date): Promise<LoginGate> {
  return db.transaction(async (trx) => {
    const store = loginAttemptsStore(trx);
    const rows: LoginAttempts[] = [];
    for (const b of buckets) rows.push(current(await store.getForUpdate(b.name, now), b.policy, now));

    const waits = rows.flatMap((r) =>
      r.lockedUntil && r.lockedUntil.getTime() > now.getTime() ? [r.lockedUntil.getTime()] : [],
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
        lockedUntil: delay > 0 ? new Date(now.getTime() + delay) : null,
        updatedAt: now,
      });
      delayAfterFailureMs = Math.max(delayAfterFailureMs, delay);
      freeAttemptsLeft = Math.min(freeAttemptsLeft, Math.max(0, b.policy.freeFailures - failures));
    }
    return { allowed: true as const, delayAfterFailureMs, freeAttemptsLeft };
  });
}

/** After the password check: success clears the account's counter and gives the address its attempt back. */
export function settleLoginAttempt(
  db: Knex,
  policy: LoginThrottlePolicy,
  input: { email: string; ip: string; success: boolean; now: Date },
): Promise<void> {
  return settle(db, passwordBuckets(input.email, input.ip, policy), input.success, input.now);
}

/** After the code check, the same for the account's second-step counter. */
export function settleCodeAttempt(
  db: Knex,
  policy: LoginThrottlePolicy,
  input: { accountId: string; ip: string; success: boolean; now: Date },
): Promise<void> {
  return settle(db, codeBuckets(input.accountId, input.ip, policy), input.success, input.now);
}

async function settle(db: Knex, [account, address]: Buckets, success: boolean, now: Date): Promise<void> {
  if (!success) return;
  await db.transaction(async (trx) => {
    const store = loginAttemptsStore(trx);
    await store.clear(account.name);
    const row = await store.getForUpdate(address.name, now);
    const failures = Math.max(0, row.failures - 1);
    // The wait this attempt started is lifted only when the address is back among its free failures.
    await store.put({
      ...row,
      failures,
      lockedUntil: failures < address.policy.freeFailures ? null : row.lockedUntil,
    });
  });
}
