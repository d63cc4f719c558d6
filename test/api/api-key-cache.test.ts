import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createApiKeyCache } from '../../src/features/accounts/api-key-cache.ts';
import { createAccountWithKey } from '../../src/features/accounts/create-account.ts';
import { issueApiKey } from '../../src/features/accounts/api-keys.ts';
import { createLogger } from '../../src/logger.ts';
import { createDashboardAccount, FormClient } from '../helpers/dashboard.ts';
import { startRole, type RunningProcess } from '../helpers/processes.ts';
import { startTestService, type TestService } from '../helpers/test-service.ts';
import { freePort } from '../setup/free-port.ts';

/**
 * Each API process keeps the keys it authenticated in memory; PostgreSQL announces every change to a key when it
 * commits, and every process drops the key at once. Two API processes here: the test service (in this process)
 * and a real `src/main.ts api` process on the same database.
 */

const silent = createLogger({ logLevel: 'silent' });

describe('API keys kept in memory', () => {
  let service: TestService;
  let other: RunningProcess;
  let otherUrl: string;

  beforeAll(async () => {
    service = await startTestService({ worker: false });
    const port = await freePort();
    other = await startRole(
      'api',
      {
        NODE_ENV: 'test',
        PORT: String(port),
        DATABASE_URL: service.database.url,
        TEMPORAL_ADDRESS: inject('temporalAddress'),
        TEMPORAL_TASK_QUEUE: service.taskQueue,
        DATA_DIR: inject('dataDir'),
      },
      { name: 'second api' },
    );
    otherUrl = `http://127.0.0.1:${port}/api/v1`;
  }, 180_000);

  afterAll(async () => {
    await other?.kill('SIGTERM');
    await service?.close();
  });

  const list = (baseUrl: string, bearer: string) =>
    fetch(`${baseUrl}/documents`, { headers: { authorization: `Bearer ${bearer}` } });

  /**
   * Refused as revoked once PostgreSQL has delivered the notice: that takes its backends a few milliseconds after
   * the commit, which a request sent the moment the revocation returns can beat. Never the TTL's minute.
   */
  async function expectRevoked(baseUrl: string, bearer: string) {
    await expect
      .poll(
        async () => {
          const res = await list(baseUrl, bearer);
          return `${res.status} ${((await res.json()) as { error?: { message: string } }).error?.message ?? ''}`;
        },
        { timeout: 2_000, interval: 20 },
      )
      .toBe('401 This API key has been revoked');
  }

  it('a key revoked in the dashboard of one process is refused by the other as soon as the notice arrives', async () => {
    const holder = await createDashboardAccount(service);
    const { key, secret } = await issueApiKey(service.database.db, {
      accountId: holder.accountId,
      name: 'ci',
    }).then((k) => ({ key: k.apiKey, secret: k.secret }));
    const bearer = `${key.key}:${secret}`;
    // Both processes have authenticated it (and keep it).
    for (const base of [service.baseUrl, otherUrl, service.baseUrl, otherUrl]) {
      expect((await list(base, bearer)).status).toBe(200);
    }

    const dashboard = new FormClient(service.baseUrl.replace(/\/api\/v1$/, ''));
    const csrf = await dashboard.signIn(holder.email, holder.password);
    const revoked = await dashboard.post(`/admin/api/keys/${key.id}/revoke`, { _csrf: csrf });
    expect(revoked.status).toBe(303);
    await dashboard.close();

    await expectRevoked(otherUrl, bearer);
    await expectRevoked(service.baseUrl, bearer);
  }, 60_000);

  it('a key revoked by plain SQL is refused on both processes too', async () => {
    const { key } = await createAccountWithKey(service.database.db, {
      email: `sql-${Date.now()}@example.test`,
      password: 'a long enough password',
      name: 'SQL',
      plan: 'business',
    });
    const bearer = `${key.apiKey.key}:${key.secret}`;
    for (const base of [service.baseUrl, otherUrl, otherUrl])
      expect((await list(base, bearer)).status).toBe(200);
    await service.database.db('api_keys').where({ id: key.apiKey.id }).update({ revoked_at: new Date() });
    const revokedAt = Date.now();
    await expectRevoked(otherUrl, bearer);
    await expectRevoked(service.baseUrl, bearer);
    // Far sooner than the minute the entries would otherwise be kept.
    expect(Date.now() - revokedAt).toBeLessThan(service.config.apiKeyCacheTtlMs);
  }, 60_000);

  it('keeps a key without reading PostgreSQL, forgets it on a notice, and never keeps unknown keys', async () => {
    const db = service.database.db;
    const cache = await createApiKeyCache({ db, logger: silent, ttlMs: 60_000 });
    try {
      const { apiKey } = await issueApiKey(db, {
        accountId: (await createDashboardAccount(service)).accountId,
        name: 'k',
      });
      expect((await cache.find(apiKey.key))?.scopes).toEqual(apiKey.scopes);

      // A change PostgreSQL does not announce (the trigger off) is not seen: the key came from memory.
      await db.raw('ALTER TABLE api_keys DISABLE TRIGGER api_keys_changed');
      try {
        await db('api_keys')
          .where({ id: apiKey.id })
          .update({ scopes: ['documents:read'] });
      } finally {
        await db.raw('ALTER TABLE api_keys ENABLE TRIGGER api_keys_changed');
      }
      expect((await cache.find(apiKey.key))?.scopes).toEqual(apiKey.scopes);

      // An announced change drops it: the next lookup reads the new row.
      await db('api_keys').where({ id: apiKey.id }).update({ name: 'renamed' });
      await expect
        .poll(async () => (await cache.find(apiKey.key))?.scopes, { timeout: 5_000 })
        .toEqual(['documents:read']);

      // An unknown key is looked up every time: a key created after a miss is found at once (inserts announce
      // nothing).
      const later = 'wq_' + 'L'.repeat(24);
      expect(await cache.find(later)).toBeUndefined();
      await db('api_keys').insert({
        account_id: apiKey.accountId,
        name: 'later',
        key: later,
        secret_hash: 'x'.repeat(64),
        scopes: ['documents:read'],
      });
      expect((await cache.find(later))?.name).toBe('later');
    } finally {
      await cache.close();
    }
  }, 60_000);

  it('reads PostgreSQL while its notices are cut off, and listens again', async () => {
    const db = service.database.db;
    const cache = await createApiKeyCache({ db, logger: silent, ttlMs: 60_000, reconnectDelayMs: 200 });
    const listeners = async () =>
      (
        await db.raw<{ rows: { pid: number }[] }>(
          "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query = 'LISTEN wathiq_api_keys'",
        )
      ).rows.map((r) => r.pid);
    try {
      const { apiKey } = await issueApiKey(db, {
        accountId: (await createDashboardAccount(service)).accountId,
        name: 'k',
      });
      expect((await cache.find(apiKey.key))?.revokedAt).toBeNull();
      const before = await listeners();
      expect(before.length).toBeGreaterThan(0);

      // Cut every listening connection of this database, and revoke while no notice can be sent (a notice lost
      // with the connection): the cache must not go on trusting what it kept.
      await db.raw('ALTER TABLE api_keys DISABLE TRIGGER api_keys_changed');
      try {
        await db.raw(`SELECT pg_terminate_backend(pid) FROM unnest(?::int[]) AS pid`, [before]);
        await db('api_keys').where({ id: apiKey.id }).update({ revoked_at: new Date() });
        await expect
          .poll(async () => (await cache.find(apiKey.key))?.revokedAt, { timeout: 5_000 })
          .toBeInstanceOf(Date);
      } finally {
        await db.raw('ALTER TABLE api_keys ENABLE TRIGGER api_keys_changed');
      }
      // Every API process listens again (this cache, the test service's and the other process's).
      await expect
        .poll(async () => (await listeners()).filter((p) => !before.includes(p)).length, {
          timeout: 15_000,
        })
        .toBeGreaterThanOrEqual(before.length);
    } finally {
      await cache.close();
    }
  }, 60_000);
});
