import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
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

/** A logger whose JSON lines the test can read. */
function capturedLogger() {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  return {
    logger: pino({ level: 'info' }, sink),
    entries: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

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

  it('is 503 saying only "down" for Temporal when it is unreachable; the address goes to the log', async () => {
    const temporalPort = await freePort();
    const temporal = createTemporalClient({ address: `127.0.0.1:${temporalPort}`, namespace: 'default' });
    const config = loadConfig({ NODE_ENV: 'test' });
    const log = capturedLogger();
    const api = await startApiServer(
      {
        ...service.deps,
        config,
        db: service.database.db,
        temporal,
        logger: log.logger,
        rateLimiter: createMemoryRateLimiter(),
      },
      '127.0.0.1',
      0,
    );
    try {
      const res = await fetch(`${api.url}/api/v1/health`);
      expect(res.status).toBe(503);
      const text = await res.text();
      const body = JSON.parse(text) as Health;
      expect(body.success).toBe(false);
      expect(body.error?.code).toBe(503);
      expect(body.error?.details).toEqual({ temporal: ['down'] });
      expect(text).not.toContain(String(temporalPort));
      expect(text).not.toMatch(/127\.0\.0\.1|localhost|ECONN|connect|refused|transport/i);
      // The cause is kept for the operator, under the response's request id.
      const entry = log.entries().find((e) => e.msg === 'health check: dependency down');
      expect(entry).toMatchObject({ dependency: 'temporal', requestId: res.headers.get('x-request-id') });
      expect(entry?.err).toMatchObject({ message: expect.stringMatching(/\S/) as unknown });
    } finally {
      await api.stop();
      await temporal.close();
    }
  });
});

describe('GET /api/v1/health with PostgreSQL stopped', () => {
  it('answers 200 while PostgreSQL runs, then 503 with postgres "down" and no driver text once it is stopped', async () => {
    // A PostgreSQL server of this test's own, so stopping it leaves the other files' server alone.
    const dir = await mkdtemp(path.join(os.tmpdir(), 'wathiq-health-'));
    await chmod(dir, 0o755);
    const logger = createLogger({ logLevel: 'silent' });
    const log = capturedLogger();
    const pgPort = await freePort();
    const pg = await startEmbeddedPostgres({
      dir: path.join(dir, 'pg', 'data'),
      port: pgPort,
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
        logger: log.logger,
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
      const text = await res.text();
      const body = JSON.parse(text) as Health;
      expect(body.error?.message).toBe('Service unavailable');
      expect(body.error?.details).toEqual({ postgres: ['down'] });
      expect(text).not.toContain(String(pgPort));
      expect(text).not.toMatch(/127\.0\.0\.1|localhost|::1|ECONN|connect|refused|postgres:\/\/|terminat/i);
      const entry = log.entries().find((e) => e.msg === 'health check: dependency down');
      expect(entry).toMatchObject({ dependency: 'postgres', requestId: res.headers.get('x-request-id') });
      expect(JSON.stringify(entry)).toMatch(/ECONNREFUSED|terminat|connect/i);
    } finally {
      await api.stop();
      await service.close();
      await db.destroy();
      await pg.stop();
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
