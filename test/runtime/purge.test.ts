import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../../src/features/accounts/api-keys.ts';
import { loadConfig, type Config } from '../../src/config.ts';
import { loginAttemptsStore } from '../../src/db/stores/admin-sessions-store.ts';
import { accountsStore } from '../../src/features/accounts/accounts-store.ts';
import { createLogger } from '../../src/logger.ts';
import { purgeStaleRows, startPurgeSchedule } from '../../src/runtime/purge.ts';
import { eventually } from '../helpers/approval-flow.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.ts';
import { startTestService } from '../helpers/test-service.ts';

let database: TestDatabase;
let accountId: string;
let apiKeyId: string;
beforeAll(async () => {
  database = await createTestDatabase();
  const account = await accountsStore(database.db).create({
    name: 'Purge',
    email: `purge-${randomBytes(4).toString('hex')}@example.test`,
    passwordHash: 'x',
    plan: 'basic',
  });
  accountId = account.id;
  apiKeyId = (await issueApiKey(database.db, { accountId, name: 'purge' })).apiKey.id;
});
afterAll(() => database.drop());

const logger = createLogger({ logLevel: 'silent' });
const config = (env: Record<string, string> = {}): Config => loadConfig({ NODE_ENV: 'test', ...env });
const minutesAgo = (now: Date, n: number) => new Date(now.getTime() - n * 60_000);
const tag = () => randomBytes(4).toString('hex');

async function clear(): Promise<void> {
  for (const table of ['login_attempts', 'idempotency_keys', 'admin_sessions', 'admin_login_challenges'])
    await database.db(table).delete();
}

async function loginRows(now: Date, rows: { bucket: string; minutesAgo: number; lockedFor?: number }[]) {
  await database.db('login_attempts').insert(
    rows.map((r) => ({
      bucket: r.bucket,
      failures: 4,
      updated_at: minutesAgo(now, r.minutesAgo),
      locked_until: r.lockedFor === undefined ? null : new Date(now.getTime() + r.lockedFor),
    })),
  );
}

async function idempotencyRow(key: string, expiresAt: Date): Promise<void> {
  await database.db('idempotency_keys').insert({
    account_id: accountId,
    api_key_id: apiKeyId,
    key,
    method: 'POST',
    path: '/api/v1/documents',
    request_hash: 'x'.repeat(64),
    response_status: 201,
    expires_at: expiresAt,
  });
}

async function sessionRow(idHash: string, lastSeenAt: Date, expiresAt: Date): Promise<void> {
  await database.db('admin_sessions').insert({
    id_hash: idHash,
    account_id: accountId,
    csrf_token: 'c'.repeat(43),
    created_at: minutesAgo(lastSeenAt, 1),
    last_seen_at: lastSeenAt,
    expires_at: expiresAt,
  });
}

async function challengeRow(idHash: string, expiresAt: Date): Promise<void> {
  await database.db('admin_login_challenges').insert({
    id_hash: idHash,
    account_id: accountId,
    created_at: new Date(expiresAt.getTime() - 5 * 60_000),
    expires_at: expiresAt,
  });
}

const columnOf = async (table: string, column: string) =>
  ((await database.db(table).pluck(column)) as string[]).sort();

describe('purge of stale rows', () => {
  it('deletes stale sign-in counters, expired idempotency keys, dead sessions and second steps; fresh rows stay', async () => {
    await clear();
    const now = new Date();
    // Sign-in counters are forgotten after LOGIN_FAILURE_WINDOW_MINUTES (15) without a failure.
    await loginRows(now, [
      { bucket: 'email:stale@example.test', minutesAgo: 16 },
      { bucket: 'ip:192.0.2.1', minutesAgo: 60 * 24 },
      { bucket: 'email:recent@example.test', minutesAgo: 14 },
      { bucket: 'ip:192.0.2.2', minutesAgo: 0, lockedFor: 30_000 },
    ]);
    await idempotencyRow('expired', new Date(Date.now() - 1000));
    await idempotencyRow('live', new Date(Date.now() + 3600_000));
    // Sessions end 12 hours after sign-in, or after 30 minutes without a request.
    await sessionRow('past-absolute', minutesAgo(now, 1), minutesAgo(now, 1));
    await sessionRow('idle', minutesAgo(now, 31), new Date(now.getTime() + 3600_000));
    await sessionRow('live', minutesAgo(now, 5), new Date(now.getTime() + 3600_000));
    // A sign-in waits 5 minutes for its second-step code.
    await challengeRow('code-expired', now);
    await challengeRow('code-waiting', new Date(now.getTime() + 60_000));

    const report = await purgeStaleRows({ db: database.db, config: config(), logger, now: () => now });
    expect(report).toEqual({ loginAttempts: 2, idempotencyKeys: 1, adminSessions: 2, loginChallenges: 1 });
    expect(await columnOf('login_attempts', 'bucket')).toEqual(['email:recent@example.test', 'ip:192.0.2.2']);
    expect(await columnOf('idempotency_keys', 'key')).toEqual(['live']);
    expect(await columnOf('admin_sessions', 'id_hash')).toEqual(['live']);
    expect(await columnOf('admin_login_challenges', 'id_hash')).toEqual(['code-waiting']);

    // Nothing left to do: a second run deletes nothing.
    expect(await purgeStaleRows({ db: database.db, config: config(), logger, now: () => now })).toEqual({
      loginAttempts: 0,
      idempotencyKeys: 0,
      adminSessions: 0,
      loginChallenges: 0,
    });
  });

  it('deletes in bounded batches, and at most PURGE_MAX_BATCHES of them per run', async () => {
    await clear();
    const now = new Date();
    await loginRows(
      now,
      Array.from({ length: 25 }, (_, i) => ({ bucket: `email:old-${i}@example.test`, minutesAgo: 30 })),
    );
    for (let i = 0; i < 7; i++) await idempotencyRow(`old-${i}`, new Date(Date.now() - 1000));

    // One statement deletes no more than its limit.
    expect(await loginAttemptsStore(database.db).purgeStale(minutesAgo(now, 15), now, 4)).toBe(4);
    expect(await database.db('login_attempts').select('bucket')).toHaveLength(21);

    const bounded = config({ PURGE_BATCH_SIZE: '5', PURGE_MAX_BATCHES: '2' });
    const first = await purgeStaleRows({ db: database.db, config: bounded, logger, now: () => now });
    expect(first).toEqual({ loginAttempts: 10, idempotencyKeys: 7, adminSessions: 0, loginChallenges: 0 });
    const second = await purgeStaleRows({ db: database.db, config: bounded, logger, now: () => now });
    expect(second).toEqual({ loginAttempts: 10, idempotencyKeys: 0, adminSessions: 0, loginChallenges: 0 });
    const third = await purgeStaleRows({ db: database.db, config: bounded, logger, now: () => now });
    expect(third.loginAttempts).toBe(1);
    expect(await database.db('login_attempts').select('bucket')).toEqual([]);
  });

  it('runs on its timer until stopped', async () => {
    await clear();
    const now = new Date();
    await loginRows(now, [{ bucket: `email:timer-${tag()}@example.test`, minutesAgo: 20 }]);
    // PURGE_INTERVAL_MINUTES=0.001: every 48 to 72 ms.
    const schedule = startPurgeSchedule({
      db: database.db,
      config: config({ PURGE_INTERVAL_MINUTES: '0.001' }),
      logger,
    });
    try {
      await eventually(async () => (await database.db('login_attempts').select('bucket')).length === 0);
    } finally {
      await schedule.stop();
    }
  });

  it('is started and stopped with the API server', async () => {
    const service = await startTestService({
      worker: false,
      env: { PURGE_INTERVAL_MINUTES: '0.001' },
    });
    try {
      const bucket = `email:api-${tag()}@example.test`;
      await service.database.db('login_attempts').insert({
        bucket,
        failures: 5,
        updated_at: minutesAgo(new Date(), 20),
      });
      await eventually(
        async () => (await service.database.db('login_attempts').where({ bucket })).length === 0,
      );
    } finally {
      await service.close();
    }
  });
});
