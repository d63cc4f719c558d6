import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey, tooManyKeysMessage } from '../../src/features/accounts/api-keys.ts';
import { createAccountWithKey } from '../../src/features/accounts/create-account.ts';
import { apiKeysStore } from '../../src/features/accounts/api-keys-store.ts';
import { AppError } from '../../src/errors.ts';
import { createDashboardAccount, FormClient } from '../helpers/dashboard.ts';
import { startTestService, type TestService } from '../helpers/test-service.ts';

let service: TestService;
let limited: TestService;
beforeAll(async () => {
  service = await startTestService({ worker: false });
  // The same database, with the limit lowered to 2: the variable is what the dashboard enforces.
  limited = await startTestService({
    worker: false,
    database: service.database,
    env: { API_KEYS_MAX_PER_ACCOUNT: '2' },
  });
});
afterAll(async () => {
  await limited.close();
  await service.close();
});

/** Signs in to the dashboard of `via` as a new account (which has its first key already). */
async function signedIn(via: TestService) {
  const holder = await createDashboardAccount(via);
  const client = new FormClient(via.api.url.replace('localhost', '127.0.0.1'));
  const csrf = await client.signIn(holder.email, holder.password);
  const create = (name: string) =>
    client.post('/admin/api/keys', { _csrf: csrf, name, scopes: 'documents:read' });
  return { holder, client, csrf, create };
}

const activeKeys = async (accountId: string) =>
  (await apiKeysStore(service.database.db).listByAccount(accountId)).filter((k) => !k.revokedAt);

describe('active API keys per account (API_KEYS_MAX_PER_ACCOUNT, default 10)', () => {
  it('the dashboard creates the 10th key and refuses the 11th with a 422 that says why; a revoked key frees a place', async () => {
    const { holder, client, csrf, create } = await signedIn(service);
    for (let n = 2; n <= 10; n++) expect((await create(`key ${n}`)).status).toBe(200);
    const refused = await create('key 11');
    expect(refused.status).toBe(422);
    const page = await refused.text();
    expect(page).toContain(
      'This account already has 10 active keys, the most it may have: revoke one it no longer uses, then create the new one.',
    );
    expect(await activeKeys(holder.accountId)).toHaveLength(10);

    const [oldest] = (await activeKeys(holder.accountId)).slice(-1);
    expect((await client.post(`/admin/api/keys/${oldest!.id}/revoke`, { _csrf: csrf })).status).toBe(303);
    expect((await create('key 11')).status).toBe(200);
    expect(await activeKeys(holder.accountId)).toHaveLength(10);
    await client.close();
  });

  it('follows the variable: with 2, the dashboard refuses the 3rd', async () => {
    const { holder, client, create } = await signedIn(limited);
    expect((await create('second')).status).toBe(200);
    const refused = await create('third');
    expect(refused.status).toBe(422);
    expect(await refused.text()).toContain('This account already has 2 active keys');
    expect(await activeKeys(holder.accountId)).toHaveLength(2);
    await client.close();
  });

  it('is a 422 on keys wherever a key is issued, and holds under concurrent creations', async () => {
    const { account } = await createAccountWithKey(service.database.db, {
      email: `limit-${Date.now()}@example.test`,
      password: 'correct horse battery staple',
      name: 'Limit',
    });
    const attempts = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) =>
        issueApiKey(service.database.db, { accountId: account.id, name: `race ${i}`, maxActive: 4 }),
      ),
    );
    expect(attempts.filter((a) => a.status === 'fulfilled')).toHaveLength(3);
    for (const attempt of attempts.filter((a) => a.status === 'rejected')) {
      const err = attempt.reason as AppError;
      expect(err).toBeInstanceOf(AppError);
      expect(err.status).toBe(422);
      expect(err.details).toEqual({ keys: [tooManyKeysMessage(4)] });
    }
    expect(await activeKeys(account.id)).toHaveLength(4);
  });
});
