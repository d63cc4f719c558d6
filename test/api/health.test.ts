import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { createDb } from '../../src/db/knex.ts';
import { createLogger } from '../../src/logger.ts';
import { createMemoryRateLimiter } from '../../src/rate-limit/memory-rate-limiter.ts';
import { startApiServer } from '../../src/runtime/api-server.ts';
import { startEmbeddedPostgres } from '../../src/runtime/embedded-postgres.ts';
import { createTemporalClient } from '../../src/temporal/client.ts';
import { freePort } from '../setup/free-port.ts';
import { startTestService, type TestService } from '../helpers/test-service.ts';

type Health = {
  success: boolean;
  data?: { status: string; checks: Record<string, { status: string; latency_ms: number }> };
  error?: { code: number; message: string; details: Record<string, string[]> };
};

describe('GET /api/v1/health', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService({ worker: false });
  });
  afterAll(() => service.close());

  it('is public and reports both dependencies up', async () => {
    const res = await service.request('/health');
    expect(res.status).toBe(200);
    const body = (await res.json()) as Health;
    expect(body.success).toBe(true);
    expect(body.data?.status).toBe('ok');
    expect(body.data?.checks.postgres?.status).toBe('up');
    expect(body.data?.checks.temporal?.status).toBe('up');
    expect(res.headers.get('cache-control')).toBe('no-store');
  });

  it('is 503 naming Temporal when the Temporal server is unreachable', async () => {
    const temporal = createTemporalClient({ address: `127.0.0.1:${await freePort()}`, namespace: 'default' });
    const config = loadConfig({ NODE_ENV: 'test' });
    const api = await startApiServer(
      {
        ...service.deps,
        config,
        db: service.database.db,
        temporal,
        logger: service.logger,
        rateLimiter: createMemoryRateLimiter(),
      },
      '127.0.0.1',
      0,
    );
    try {
      const res = await fetch(`${api.url}/api/v1/health`);
      expect(res.status).toBe(503);
      const body = (await res.json()) as Health;
      expect(body.success).toBe(false);
      expect(body.error?.code).toBe(503);
      expect(Object.keys(body.error?.details ?? {})).toEqual(['temporal']);
    } finally {
      await api.stop();
      await temporal.close();
    }
  });
});

describe('GET /api/v1/health with PostgreSQL stopped', () => {
  it('answers 200 while PostgreSQL runs, then 503 naming postgres once it is stopped', async () => {
    // A PostgreSQL server of this test's own, so stopping it leaves the other files' server alone.
    const dir = await mkdtemp(path.join(os.tmpdir(), 'wathiq-health-'));
    await chmod(dir, 0o755);
    const logger = createLogger({ logLevel: 'silent' });
    const pg = await startEmbeddedPostgres({
      dir: path.join(dir, 'pg', 'data'),
      port: await freePort(),
      logger,
    });
    const db = createDb(pg.url('postgres'), { poolMax: 2 });
    const service = await startTestService({ worker: false });
    const api = await startApiServer(
      {
        ...service.deps,
        config: service.config,
        db,
        temporal: service.temporal,
        logger,
        rateLimiter: createMemoryRateLimiter(),
      },
      '127.0.0.1',
      0,
    );
    try {
      expect((await fetch(`${api.url}/api/v1/health`)).status).toBe(200);
      await pg.stop();
      const res = await fetch(`${api.url}/api/v1/health`);
      expect(res.status).toBe(503);
      const body = (await res.json()) as Health;
      expect(body.error?.message).toBe('Service unavailable');
      expect(Object.keys(body.error?.details ?? {})).toEqual(['postgres']);
    } finally {
      await api.stop();
      await service.close();
      await db.destroy();
      await pg.stop();
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
