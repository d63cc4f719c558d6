import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestAccount, type TestService } from '../helpers/test-service.ts';

/**
 * Walks every operation of the served document and asks the running API whether it answers the statuses the
 * idempotency and rate-limit middleware produce, and whether the document lists them there: a 422 for a bad
 * Idempotency-Key on each operation that takes the header (and none where it does not), a 429 with Retry-After
 * on each rate-limited operation, and a 503 with Retry-After documented everywhere (what answers it has tests of
 * its own: unavailable.unit.test.ts, upload gate tests).
 */

interface Parameter {
  name: string;
  in: string;
  schema: { type?: string };
}
interface Operation {
  operationId: string;
  parameters: Parameter[];
  security: unknown[];
  responses: Record<string, unknown>;
}
interface Doc {
  paths: Record<string, Record<string, Operation>>;
  components: { responses: Record<string, { headers: Record<string, unknown> }> };
}
interface ErrorBody {
  error: { type: string; details: Record<string, string[]> };
}

let service: TestService;
let doc: Doc;
beforeAll(async () => {
  service = await startTestService({ worker: false });
  doc = (await (await service.request('/openapi.json')).json()) as Doc;
});
afterAll(() => service.close());

const operations = () =>
  Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({ path, method: method.toUpperCase(), op })),
  );

/** The path with each parameter filled by a well-formed id of nothing. */
function concrete(path: string, op: Operation): string {
  return path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const param = op.parameters.find((p) => p.in === 'path' && p.name === name);
    return param?.schema.type === 'integer' ? '987654321' : randomUUID();
  });
}

const call = (
  path: string,
  method: string,
  account: TestAccount | undefined,
  headers: Record<string, string> = {},
) =>
  service.request(path, {
    method,
    account,
    headers: { 'content-type': 'application/json', ...headers },
    body: method === 'GET' || method === 'DELETE' ? undefined : '{}',
  });

describe('every status the middleware answers is documented where it answers it', () => {
  it('a malformed Idempotency-Key is a 422 exactly on the operations that take the header', async () => {
    const account = await service.createAccount();
    for (const { path, method, op } of operations()) {
      const takesKey = op.parameters.some((p) => p.in === 'header' && p.name === 'Idempotency-Key');
      const res = await call(concrete(path, op), method, account, { 'Idempotency-Key': 'not a key' });
      const body = (await res.json().catch(() => undefined)) as ErrorBody | undefined;
      const refusedForKey = res.status === 422 && body?.error.details['Idempotency-Key'] !== undefined;
      expect(refusedForKey, `${method} ${path} answered ${res.status}`).toBe(takesKey);
      if (takesKey)
        expect(Object.keys(op.responses), op.operationId).toEqual(expect.arrayContaining(['409', '422']));
    }
  });

  it('a key reused for another request is the documented 422 idempotency_key_reused', async () => {
    const account = await service.createAccount();
    const key = randomUUID();
    const create = (url: string) =>
      service.request('/webhooks', {
        method: 'POST',
        account,
        headers: { 'content-type': 'application/json', 'Idempotency-Key': key },
        body: JSON.stringify({ url, events: ['document.created'] }),
      });
    expect((await create('https://receiver.example/a')).status).toBe(201);
    const reused = await create('https://receiver.example/b');
    expect(reused.status).toBe(422);
    expect(((await reused.json()) as ErrorBody).error.type).toBe('idempotency_key_reused');
    expect(Object.keys(doc.paths['/webhooks']!.post!.responses)).toContain('422');
  });

  it('once a key has spent its minute, every protected operation is a documented 429 with Retry-After', async () => {
    const account = await service.createAccount({ plan: 'basic' });
    // Spend the key's minute well inside one window, so the walk below meets the same exhausted window.
    let res = await service.request('/account/settings', { account });
    const reset = Number(res.headers.get('x-ratelimit-reset'));
    if (reset - Date.now() / 1000 < 20)
      await new Promise((r) => setTimeout(r, (reset - Date.now() / 1000 + 1) * 1000));
    do res = await service.request('/account/settings', { account });
    while (res.status !== 429);
    expect(doc.components.responses.E429!.headers).toHaveProperty('Retry-After');
    expect(doc.components.responses.E503!.headers).toHaveProperty('Retry-After');
    for (const { path, method, op } of operations()) {
      const answer = await call(concrete(path, op), method, account);
      const limited =
        answer.status === 429 && ((await answer.json()) as ErrorBody).error.type === 'rate_limited';
      expect(limited, `${method} ${path} answered ${answer.status}`).toBe(op.security.length > 0);
      if (limited) expect(answer.headers.get('retry-after'), op.operationId).toMatch(/^\d+$/);
      expect(Object.keys(op.responses).includes('429'), op.operationId).toBe(limited);
      expect(Object.keys(op.responses), op.operationId).toContain('503');
    }
  });
});
