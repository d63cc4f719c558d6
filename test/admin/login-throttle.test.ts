import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addressKey,
  admitCodeAttempt,
  admitLoginAttempt,
  delayAfter,
  settleCodeAttempt,
  loginThrottlePolicy,
  settleLoginAttempt,
  type LoginGate,
  type LoginThrottlePolicy,
} from '../../src/admin/login-throttle.ts';
import { loadConfig } from '../../src/config.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.ts';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.drop());

/** The defaults, as a deployment without LOGIN_* variables gets them. */
const policy: LoginThrottlePolicy = loginThrottlePolicy(loadConfig({ NODE_ENV: 'test' }).login);

const seconds = (n: number) => n * 1000;
const minutes = (n: number) => n * 60_000;
const after = (t: Date, ms: number) => new Date(t.getTime() + ms);
let counter = 0;
const fresh = () => ({ email: `throttle-${++counter}@example.test`, ip: `10.0.0.${counter}` });

const admit = (who: { email: string; ip: string }, now: Date) =>
  admitLoginAttempt(database.db, policy, { ...who, now });

async function fail(who: { email: string; ip: string }, now: Date): Promise<LoginGate> {
  const gate = await admit(who, now);
  if (gate.allowed) await settleLoginAttempt(database.db, policy, { ...who, success: false, now });
  return gate;
}

async function succeed(who: { email: string; ip: string }, now: Date): Promise<LoginGate> {
  const gate = await admit(who, now);
  if (gate.allowed) await settleLoginAttempt(database.db, policy, { ...who, success: true, now });
  return gate;
}

describe('login throttling by progressive delays', () => {
  it('has the documented defaults: 3 free failures per email, 20 per address, 1 s doubling to 60 s', () => {
    expect(policy.email).toEqual({
      freeFailures: 3,
      baseDelayMs: 1000,
      maxDelayMs: 60_000,
      windowMs: minutes(15),
    });
    expect(policy.ip.freeFailures).toBe(20);
    expect(policy.code).toEqual({ ...policy.email, freeFailures: 5 });
    expect([2, 3, 4, 5, 6, 7, 8, 9, 10, 50].map((n) => delayAfter(n, policy.email))).toEqual([
      0, 1000, 2000, 4000, 8000, 16_000, 32_000, 60_000, 60_000, 60_000,
    ]);
  });

  it('after 3 failures each further attempt waits 1 s, 2 s, 4 s … up to 60 s; inside the wait it is refused', async () => {
    const who = fresh();
    let t = new Date('2026-03-01T10:00:00Z');
    const gates: LoginGate[] = [];
    for (let i = 0; i < 3; i++) gates.push(await fail(who, t));
    expect(gates).toEqual([
      { allowed: true, delayAfterFailureMs: 0, freeAttemptsLeft: 2 },
      { allowed: true, delayAfterFailureMs: 0, freeAttemptsLeft: 1 },
      { allowed: true, delayAfterFailureMs: 1000, freeAttemptsLeft: 0 },
    ]);

    const waits: number[] = [];
    let wait = 1000;
    for (let i = 0; i < 9; i++) {
      // A millisecond before the wait is over: refused, and told when it ends.
      expect(await admit(who, after(t, wait - 1))).toEqual({ allowed: false, retryAt: after(t, wait) });
      t = after(t, wait);
      const gate = await fail(who, t);
      expect(gate.allowed).toBe(true);
      if (!gate.allowed) return;
      waits.push(wait);
      wait = gate.delayAfterFailureMs;
    }
    expect(waits).toEqual([1000, 2000, 4000, 8000, 16_000, 32_000, 60_000, 60_000, 60_000]);
    expect(wait).toBe(60_000);
  });

  it('refused attempts change nothing: hammering does not lengthen the wait', async () => {
    const who = fresh();
    const t0 = new Date('2026-03-01T10:30:00Z');
    for (let i = 0; i < 4; i++) await fail(who, after(t0, seconds(i * 5)));
    const lastFailure = after(t0, seconds(15));
    for (let ms = 0; ms < 2000; ms += 50)
      expect(await admit(who, after(lastFailure, ms))).toEqual({
        allowed: false,
        retryAt: after(lastFailure, 2000),
      });
    expect((await succeed(who, after(lastFailure, 2000))).allowed).toBe(true);
  });

  it('counts the email whatever the case or spaces it is typed with', async () => {
    const who = fresh();
    const now = new Date('2026-03-01T11:00:00Z');
    for (let i = 0; i < policy.email.freeFailures; i++)
      await fail({ ...who, email: i % 2 ? who.email.toUpperCase() : ` ${who.email} ` }, now);
    expect((await admit(who, now)).allowed).toBe(false);
  });

  it('forgets failures after a quiet window, and on a successful sign-in', async () => {
    const who = fresh();
    const t0 = new Date('2026-03-01T12:00:00Z');
    for (let i = 0; i < 2; i++) await fail(who, t0);
    expect(await admit(who, after(t0, minutes(16)))).toEqual({
      allowed: true,
      delayAfterFailureMs: 0,
      freeAttemptsLeft: 2,
    });

    const t1 = after(t0, minutes(17));
    await fail(who, t1);
    expect((await succeed(who, after(t1, seconds(5)))).allowed).toBe(true);
    expect(await database.db('login_attempts').where({ bucket: `email:${who.email}` })).toEqual([]);
  });

  it('admits only the free failures of a burst of parallel guesses', async () => {
    const who = fresh();
    const now = new Date('2026-03-01T13:00:00Z');
    const gates = await Promise.all(Array.from({ length: 20 }, () => admit(who, now)));
    expect(gates.filter((g) => g.allowed)).toHaveLength(policy.email.freeFailures);
  });

  it('slows an address that fails on many different emails, and no other address', async () => {
    const ip = '192.0.2.77';
    const now = new Date('2026-03-01T14:00:00Z');
    for (let i = 0; i < policy.ip.freeFailures; i++)
      expect((await fail({ email: `spray-${i}@example.test`, ip }, now)).allowed).toBe(true);
    expect(await admit({ email: 'spray-new@example.test', ip }, now)).toEqual({
      allowed: false,
      retryAt: after(now, 1000),
    });
    expect((await admit({ email: 'spray-new@example.test', ip: '192.0.2.78' }, now)).allowed).toBe(true);
  });

  it('gives an address its attempt back when the sign-in succeeds', async () => {
    const who = fresh();
    const now = new Date('2026-03-01T15:00:00Z');
    for (let i = 0; i < 3; i++) await succeed(who, now);
    const row = await database
      .db('login_attempts')
      .where({ bucket: `ip:${who.ip}` })
      .first<{ failures: number; locked_until: Date | null }>();
    expect(row).toMatchObject({ failures: 0, locked_until: null });
  });

  it("cannot lock the account holder out: an attacker's failures from many addresses only delay them", async () => {
    const victim = { email: 'victim@example.test', ip: '198.51.100.7' };
    const t0 = new Date('2026-03-01T16:00:00Z');
    // Five minutes of guessing from 250 addresses, one try a second: one guess per wait gets through, at
    // seconds 0, 1, 2 (free), 3, 5, 9, 17, 33, 65 (waits of 1 … 32 s), then every 60 s: 125, 185, 245.
    const admittedAt: number[] = [];
    let last = t0;
    for (let i = 0; i < 300; i++) {
      last = after(t0, seconds(i));
      const gate = await fail({ email: victim.email, ip: `203.0.113.${i % 250}` }, last);
      if (gate.allowed) admittedAt.push(i);
    }
    expect(admittedAt).toEqual([0, 1, 2, 3, 5, 9, 17, 33, 65, 125, 185, 245]);

    // The holder, from their own address: told to wait (never longer than the 60 s cap), then signs in.
    const tried = after(last, 500);
    const gate = await admit(victim, tried);
    expect(gate.allowed).toBe(false);
    if (gate.allowed) return;
    expect(gate.retryAt.getTime() - tried.getTime()).toBeLessThanOrEqual(60_000);
    expect((await succeed(victim, gate.retryAt)).allowed).toBe(true);
    // Their own address was never slowed, and the account's counter is cleared by the success.
    expect(await database.db('login_attempts').where({ bucket: `email:${victim.email}` })).toEqual([]);
  });

  it('counts an IPv6 client by its /64 and an IPv4-mapped address as the IPv4 address', () => {
    expect(addressKey('192.0.2.7')).toBe('192.0.2.7');
    expect(addressKey('::ffff:192.0.2.7')).toBe('192.0.2.7');
    expect(addressKey('::FFFF:192.0.2.7')).toBe('192.0.2.7');
    expect(addressKey('2001:db8:1:2:aaaa:bbbb:cccc:dddd')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:0DB8:0001:0002::1')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(addressKey('2001:db8:1:2::1%eth0')).toBe('2001:db8:1:2::/64');
    expect(addressKey('::1')).toBe('0:0:0:0::/64');
    expect(addressKey('64:ff9b::192.0.2.7')).toBe('64:ff9b:0:0::/64');
    // Not an address at all (nothing Koa hands over): kept as it is, never thrown on.
    expect(addressKey('not-an-address')).toBe('not-an-address');
  });

  it('slows a client that walks through the addresses of its IPv6 /64 as one client', async () => {
    const now = new Date('2026-03-01T17:00:00Z');
    const prefix = '2001:db8:77:1';
    for (let i = 0; i < policy.ip.freeFailures; i++)
      expect(
        (await fail({ email: `v6-${i}@example.test`, ip: `${prefix}::${(i + 1).toString(16)}` }, now))
          .allowed,
      ).toBe(true);
    expect(
      (await admit({ email: 'v6-new@example.test', ip: `${prefix}:ffff:ffff:ffff:ffff` }, now)).allowed,
    ).toBe(false);
    // The next /64 is another client.
    expect((await admit({ email: 'v6-new@example.test', ip: '2001:db8:77:2::1' }, now)).allowed).toBe(true);
    // A dual-stack socket's IPv4-mapped form of an IPv4 client is the same client.
    const v4 = '198.51.100.99';
    for (let i = 0; i < policy.ip.freeFailures; i++)
      await fail({ email: `v4-${i}@example.test`, ip: v4 }, now);
    expect((await admit({ email: 'v4-new@example.test', ip: `::ffff:${v4}` }, now)).allowed).toBe(false);
  });

  it('counts second-step codes per account whatever the address, 5 free, and on the address too', async () => {
    const accountId = '00000000-0000-4000-8000-00000000c0de';
    const now = new Date('2026-03-01T18:00:00Z');
    const code = (ip: string) => admitCodeAttempt(database.db, policy, { accountId, ip, now });
    const gates: LoginGate[] = [];
    for (let i = 0; i < policy.code.freeFailures; i++) gates.push(await code(`192.0.2.${100 + i}`));
    expect(gates.map((g) => g.allowed)).toEqual([true, true, true, true, true]);
    expect(gates.at(-1)).toEqual({ allowed: true, delayAfterFailureMs: 1000, freeAttemptsLeft: 0 });
    // The sixth, from yet another address, waits.
    expect(await code('192.0.2.200')).toEqual({ allowed: false, retryAt: after(now, 1000) });
    // A right code after the wait clears the account's count.
    await settleCodeAttempt(database.db, policy, { accountId, ip: '192.0.2.201', success: true, now });
    expect(await database.db('login_attempts').where({ bucket: `code:${accountId}` })).toEqual([]);
    // Each of those codes was counted for its address as well.
    const row = await database
      .db('login_attempts')
      .where({ bucket: 'ip:192.0.2.100' })
      .first<{ failures: number }>();
    expect(row?.failures).toBe(1);
  });
});
