import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKeysStore } from '../../src/features/accounts/api-keys-store.ts';
import { eventually } from '../helpers/approval-flow.ts';
import { startTestService, type TestAccount, type TestService } from '../helpers/test-service.ts';

let service: TestService;
let account: TestAccount;

beforeAll(async () => {
  service = await startTestService({ worker: false });
  account = await service.createAccount();
});
afterAll(() => service.close());

async function expect401(res: Response, message: RegExp) {
  expect(res.status).toBe(401);
  const body = (await res.json()) as {
    success: boolean;
    error: { code: number; message: string; details: object };
  };
  expect(body.success).toBe(false);
  expect(body.error.code).toBe(401);
  expect(body.error.message).toMatch(message);
  expect(body.error.details).toEqual({});
}

describe('authentication', () => {
  it('accepts Bearer KEY:SECRET and records last use', async () => {
    const res = await service.request('/documents/00000000-0000-4000-8000-000000000000', { account });
    expect(res.status).toBe(404); // authenticated: the route answered, not the auth layer
    // The use is recorded without holding up the request (authenticate.ts): it lands a moment after the answer.
    const key = await eventually(async () => {
      const [k] = await apiKeysStore(service.database.db).listByAccount(account.accountId);
      return k?.lastUsedAt ? k : undefined;
    }, 10_000);
    expect(key.lastUsedAt).toBeInstanceOf(Date);
  });

  it.each([
    ['no header', undefined],
    ['empty header', ''],
    ['another scheme', 'Basic dXNlcjpwYXNz'],
    ['bearer without secret', 'Bearer wq_AAAAAAAAAAAAAAAAAAAAAAAA'],
    ['garbage', 'Bearer !!!:???'],
    ['a very long header', `Bearer ${'x'.repeat(10_000)}`],
  ])('401 for a malformed header: %s', async (_label, header) => {
    const res = await service.request('/documents/x', {
      headers: header === undefined ? {} : { authorization: header },
    });
    await expect401(res, /malformed Authorization/);
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
  });

  it('401 for an unknown key', async () => {
    const res = await service.request('/documents/x', {
      headers: { authorization: `Bearer wq_${'Z'.repeat(24)}:${account.secret}` },
    });
    await expect401(res, /Invalid API key/);
  });

  it('401 for a wrong secret of a real key', async () => {
    const wrong = account.secret.slice(0, -1) + (account.secret.endsWith('A') ? 'B' : 'A');
    const res = await service.request('/documents/x', {
      headers: { authorization: `Bearer ${account.key}:${wrong}` },
    });
    await expect401(res, /Invalid API key/);
  });

  it('401 for a revoked key, as soon as PostgreSQL has announced the revocation', async () => {
    const other = await service.createAccount();
    expect(
      (await service.request('/documents/00000000-0000-4000-8000-000000000000', { account: other })).status,
    ).toBe(404);
    expect(await apiKeysStore(service.database.db).revoke(other.accountId, other.apiKeyId)).toBe(true);
    // The key cache drops the key when PostgreSQL's notice reaches it, a few milliseconds after the commit: a request
    // sent the moment revoke() returns can beat it (CI saw one 404 so), never the cache's minute-long TTL.
    await expect
      .poll(async () => (await service.request('/documents/x', { account: other })).status, {
        timeout: 2_000,
        interval: 20,
      })
      .toBe(401);
    await expect401(await service.request('/documents/x', { account: other }), /revoked/);
  });

  it('stores only a hash of the secret', async () => {
    const rows = await service.database.db('api_keys').select('*');
    const dump = JSON.stringify(rows);
    expect(dump).not.toContain(account.secret);
    expect(dump).toContain(account.key);
  });

  it('leaves public endpoints public', async () => {
    const res = await service.request('/health');
    expect([200, 503]).toContain(res.status);
    expect(res.headers.get('x-ratelimit-limit')).toBeNull();
  });
});

describe('scopes', () => {
  it('403 names the missing scope; the scopes a key has still work', async () => {
    const readOnly = await service.createAccount({ scopes: ['documents:read'] });
    const denied = await service.request('/documents', {
      method: 'POST',
      account: readOnly,
      body: JSON.stringify({ title: 'x' }),
    });
    expect(denied.status).toBe(403);
    expect(await denied.json()).toEqual({
      success: false,
      error: {
        code: 403,
        type: 'forbidden',
        message: 'This API key lacks the "documents:write" scope',
        details: {},
      },
    });
    const webhooks = await service.request('/webhooks', { account: readOnly });
    expect(webhooks.status).toBe(403);
    expect(((await webhooks.json()) as { error: { message: string } }).error.message).toContain(
      'webhooks:read',
    );

    const allowed = await service.request('/documents', { account: readOnly });
    expect(allowed.status).toBe(200);
  });
});
