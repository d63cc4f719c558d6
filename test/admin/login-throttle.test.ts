import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admitLoginAttempt, LOGIN_THROTTLE, settleLoginAttempt } from '../../src/admin/login-throttle.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.ts';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.drop());

const minutes = (n: number) => n * 60_000;
let counter = 0;
const fresh = () => ({ email: `throttle-${++counter}@example.test`, ip: `10.0.0.${counter}` });

async function fail(input: { email: string; ip: string }, now: Date) {
  const gate = await admitLoginAttempt(database.db, { ...input, now });
  if (gate.allowed) await settleLoginAttempt(database.db, { ...input, success: false, now });
  return gate;
}

describe('login throttling', () => {
  it('locks an email for 15 minutes after 5 failures, then lets it try again', async () => {
    const who = fresh();
    const t0 = new Date('2026-03-01T10:00:00Z');
    const remaining: number[] = [];
    for (let i = 0; i < 5; i++) {
      const gate = await fail(who, new Date(t0.getTime() + i * 1000));
      expect(gate.allowed).toBe(true);
      if (gate.allowed) remaining.push(gate.remainingAfterFailure);
    }
    expect(remaining).toEqual([4, 3, 2, 1, 0]);

    const locked = await admitLoginAttempt(database.db, { ...who, now: new Date(t0.getTime() + minutes(5)) });
    expect(locked).toEqual({ allowed: false, retryAt: new Date(t0.getTime() + 4000 + minutes(15)) });

    const later = await admitLoginAttempt(database.db, { ...who, now: new Date(t0.getTime() + minutes(16)) });
    expect(later).toMatchObject({ allowed: true, remainingAfterFailure: 4 });
  });

  it('locks the email whatever the case or spaces it is typed with', async () => {
    const who = fresh();
    const now = new Date('2026-03-01T11:00:00Z');
    for (let i = 0; i < LOGIN_THROTTLE.email.maxFailures; i++)
      await fail({ ...who, email: i % 2 ? who.email.toUpperCase() : ` ${who.email} ` }, now);
    expect((await admitLoginAttempt(database.db, { ...who, now })).allowed).toBe(false);
  });

  it('forgets failures after a quiet window, and on a successful sign-in', async () => {
    const who = fresh();
    const t0 = new Date('2026-03-01T12:00:00Z');
    for (let i = 0; i < 4; i++) await fail(who, t0);
    const afterQuiet = await admitLoginAttempt(database.db, {
      ...who,
      now: new Date(t0.getTime() + minutes(20)),
    });
    expect(afterQuiet).toMatchObject({ allowed: true, remainingAfterFailure: 4 });

    for (let i = 0; i < 3; i++) await fail(who, t0);
    const t1 = new Date(t0.getTime() + minutes(21));
    await admitLoginAttempt(database.db, { ...who, now: t1 });
    await settleLoginAttempt(database.db, { ...who, success: true, now: t1 });
    expect(await database.db('login_attempts').where({ bucket: `email:${who.email}` })).toEqual([]);
  });

  it('admits at most 5 of a burst of parallel guesses', async () => {
    const who = fresh();
    const now = new Date('2026-03-01T13:00:00Z');
    const gates = await Promise.all(
      Array.from({ length: 20 }, () => admitLoginAttempt(database.db, { ...who, now })),
    );
    expect(gates.filter((g) => g.allowed)).toHaveLength(LOGIN_THROTTLE.email.maxFailures);
  });

  it('locks an address that fails on many different emails', async () => {
    const ip = '192.0.2.77';
    const now = new Date('2026-03-01T14:00:00Z');
    for (let i = 0; i < LOGIN_THROTTLE.ip.maxFailures; i++)
      expect((await fail({ email: `spray-${i}@example.test`, ip }, now)).allowed).toBe(true);
    const next = await admitLoginAttempt(database.db, { email: 'spray-new@example.test', ip, now });
    expect(next.allowed).toBe(false);
    // Another address is not affected.
    const elsewhere = await admitLoginAttempt(database.db, {
      email: 'spray-new@example.test',
      ip: '192.0.2.78',
      now,
    });
    expect(elsewhere.allowed).toBe(true);
  });

  it('gives an address its attempt back when the sign-in succeeds', async () => {
    const who = fresh();
    const now = new Date('2026-03-01T15:00:00Z');
    for (let i = 0; i < 3; i++) {
      await admitLoginAttempt(database.db, { ...who, now });
      await settleLoginAttempt(database.db, { ...who, success: true, now });
    }
    const row = await database
      .db('login_attempts')
      .where({ bucket: `ip:${who.ip}` })
      .first<{ failures: number; locked_until: Date | null }>();
    expect(row).toMatchObject({ failures: 0, locked_until: null });
  });
});
