import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { createDb } from '../../src/db/knex.ts';
import { createMemoryRateLimiter } from '../../src/rate-limit/memory-rate-limiter.ts';
import { startApiServer } from '../../src/runtime/api-server.ts';
import { freePort } from '../setup/free-port.ts';
import { startTestService, type TestAccount, type TestService } from '../helpers/test-service.ts';

let service: TestService;
let account: TestAccount;
beforeAll(async () => {
  service = await startTestService({ worker: false, env: { JSON_BODY_LIMIT: '1kb' } });
  account = await service.createAccount();
});
afterAll(() => service.close());

type Envelope = {
  success: false;
  error: { code: number; message: string; details: Record<string, string[]> };
};

describe('error envelope', () => {
  it('unknown route: 404 in the envelope, with a request id', async () => {
    const res = await service.request('/nope');
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(await res.json()).toEqual({
      success: false,
      error: { code: 404, message: 'No route for GET /api/v1/nope', details: {} },
    });
  });

  it('outside the API prefix too', async () => {
    const res = await fetch(`${service.api.url}/favicon.ico`);
    expect(res.status).toBe(404);
    expect(((await res.json()) as Envelope).error.code).toBe(404);
  });

  it('echoes a sane X-Request-Id and replaces an unsafe one', async () => {
    const echoed = await service.request('/health', { headers: { 'x-request-id': 'trace-42.abc' } });
    expect(echoed.headers.get('x-request-id')).toBe('trace-42.abc');
    const replaced = await service.request('/health', { headers: { 'x-request-id': 'a b\tc<script>' } });
    expect(replaced.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('malformed JSON: 400', async () => {
    const res = await service.request('/webhooks', { method: 'POST', account, body: '{"url": ' });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      success: false,
      error: { code: 400, message: 'Malformed JSON in request body', details: {} },
    });
  });

  it('body over the limit: 413', async () => {
    const res = await service.request('/webhooks', {
      method: 'POST',
      account,
      body: JSON.stringify({ url: `https://example.com/${'x'.repeat(5000)}`, events: ['document.sent'] }),
    });
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({
      success: false,
      error: { code: 413, message: 'Request body too large', details: {} },
    });
  });

  it('validation: 422 with field details', async () => {
    const res = await service.request('/webhooks', {
      method: 'POST',
      account,
      body: JSON.stringify({ url: 42, events: ['document.sent'] }),
    });
    expect(res.status).toBe(422);
    const body = (await res.json()) as Envelope;
    expect(body.error.code).toBe(422);
    expect(body.error.message).toBe('Validation failed');
    expect(Object.keys(body.error.details)).toEqual(['url']);
    expect(body.error.details.url?.[0]).toMatch(/string/);
  });

  it('wrong method on a known route: 405 in the envelope', async () => {
    const res = await service.request('/health', { method: 'DELETE' });
    expect(res.status).toBe(405);
    expect(((await res.json()) as Envelope).error.code).toBe(405);
  });

  it('a database that refuses connections: 503 unavailable (Retry-After), without internals', async () => {
    // Authentication needs the database; a refused connection is a dependency down, not a bug.
    const deadPort = await freePort();
    const db = createDb(`postgres://nobody:nothing@127.0.0.1:${deadPort}/none`, { poolMax: 1 });
    const config = loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'silent' });
    const api = await startApiServer(
      {
        ...service.deps,
        config,
        db,
        temporal: service.temporal,
        logger: service.logger,
        rateLimiter: createMemoryRateLimiter(),
      },
      '127.0.0.1',
      0,
    );
    try {
      const res = await fetch(`${api.url}/api/v1/documents/x`, {
        headers: { authorization: account.authorization },
      });
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('5');
      const text = await res.text();
      expect(JSON.parse(text)).toEqual({
        success: false,
        error: { code: 503, message: 'The database is unavailable; try again shortly', details: {} },
      });
      expect(text).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|knex|stack/i);
    } finally {
      await api.stop();
      await db.destroy();
    }
  });
});
