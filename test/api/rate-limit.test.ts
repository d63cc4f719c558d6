import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/test-service.ts';

const PATH = '/documents/00000000-0000-4000-8000-000000000000';

async function burst(service: TestService, authorization: string, n: number): Promise<Response[]> {
  const out: Response[] = [];
  for (let i = 0; i < n; i++) {
    const res = await service.request(PATH, { headers: { authorization } });
    await res.arrayBuffer();
    out.push(res);
  }
  return out;
}

function expectRefusal(res: Response, limit: number) {
  expect(res.status).toBe(429);
  expect(res.headers.get('x-ratelimit-limit')).toBe(String(limit));
  expect(res.headers.get('x-ratelimit-remaining')).toBe('0');
  const reset = Number(res.headers.get('x-ratelimit-reset'));
  const now = Date.now() / 1000;
  expect(reset).toBeGreaterThan(now - 1);
  expect(reset).toBeLessThanOrEqual(Math.ceil(now) + 60);
  const retryAfter = Number(res.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(60);
}

describe('rate limiting, in memory (one API process)', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService({ worker: false });
  });
  afterAll(() => service.close());

  it('a basic key gets 100 requests a minute; the 101st is 429 with the headers; another key is unaffected', async () => {
    const basic = await service.createAccount({ plan: 'basic' });
    const other = await service.createAccount({ plan: 'basic' });
    // A window boundary in the middle of the burst would reset the count: start just after one.
    const msIntoMinute = Date.now() % 60_000;
    if (msIntoMinute > 45_000) await new Promise((r) => setTimeout(r, 60_000 - msIntoMinute + 50));

    const first = await burst(service, basic.authorization, 100);
    first.forEach((res, i) => {
      expect(res.status).toBe(404);
      expect(res.headers.get('x-ratelimit-limit')).toBe('100');
      expect(res.headers.get('x-ratelimit-remaining')).toBe(String(99 - i));
    });
    const [refused] = await burst(service, basic.authorization, 1);
    expectRefusal(refused!, 100);
    const body = (await service
      .request(PATH, { headers: { authorization: basic.authorization } })
      .then((r) => r.json())) as {
      error: { code: number; type: string; message: string };
    };
    expect(body.error).toMatchObject({
      code: 429,
      type: 'rate_limited',
      message: 'Rate limit exceeded: 100 requests per minute for the basic plan',
    });

    const [unaffected] = await burst(service, other.authorization, 1);
    expect(unaffected!.status).toBe(404);
    expect(unaffected!.headers.get('x-ratelimit-remaining')).toBe('99');
  });

  it('limits follow the plan', async () => {
    const business = await service.createAccount({ plan: 'business' });
    const enterprise = await service.createAccount({ plan: 'enterprise' });
    const [b] = await burst(service, business.authorization, 1);
    const [e] = await burst(service, enterprise.authorization, 1);
    expect(b!.headers.get('x-ratelimit-limit')).toBe('300');
    expect(e!.headers.get('x-ratelimit-limit')).toBe('1000');
  });
});

describe('rate limiting in PostgreSQL (several API processes)', () => {
  let a: TestService;
  let b: TestService;
  beforeAll(async () => {
    a = await startTestService({ worker: false, env: { RATE_LIMIT_STORE: 'postgres' } });
    // A second API on the same database, with its own limiter instance: what a second process would have.
    b = await startTestService({
      worker: false,
      env: { RATE_LIMIT_STORE: 'postgres' },
      database: a.database,
    });
  });
  afterAll(async () => {
    await b.close();
    await a.close();
  });

  it('two API servers enforce one limit per key', async () => {
    const key = await a.createAccount({ plan: 'basic' });
    const msIntoMinute = Date.now() % 60_000;
    if (msIntoMinute > 45_000) await new Promise((r) => setTimeout(r, 60_000 - msIntoMinute + 50));

    const [fromA, fromB] = await Promise.all([
      burst(a, key.authorization, 50),
      burst(b, key.authorization, 50),
    ]);
    for (const res of [...fromA, ...fromB]) expect(res.status).toBe(404);
    const remaining = [...fromA, ...fromB]
      .map((r) => Number(r.headers.get('x-ratelimit-remaining')))
      .sort((x, y) => x - y);
    expect(remaining).toEqual(Array.from({ length: 100 }, (_, i) => i)); // each count given out exactly once

    const [refusedByA] = await burst(a, key.authorization, 1);
    const [refusedByB] = await burst(b, key.authorization, 1);
    expectRefusal(refusedByA!, 100);
    expectRefusal(refusedByB!, 100);

    const other = await a.createAccount({ plan: 'basic' });
    const [unaffected] = await burst(b, other.authorization, 1);
    expect(unaffected!.status).toBe(404);
  });
});
