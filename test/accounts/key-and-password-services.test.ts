import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../src/auth/passwords.ts';
import { issueApiKey, listApiKeys, revokeApiKey } from '../../src/features/accounts/api-keys.ts';
import { accountsStore } from '../../src/features/accounts/accounts-store.ts';
import { accountByPassword } from '../../src/features/accounts/password-sign-in.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.ts';

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});

async function account(password = 'x') {
  return accountsStore(tdb.db).create({
    name: 'Acme',
    email: `${randomUUID()}@Example.com`,
    passwordHash: await hashPassword(password),
    plan: 'business',
  });
}

describe('revokeApiKey', () => {
  it('revokes once, then says so; another account’s key and an unknown id are not found and stay active', async () => {
    const mine = await account();
    const other = await account();
    const { apiKey } = await issueApiKey(tdb.db, { accountId: mine.id, name: 'ci' });
    const { apiKey: theirs } = await issueApiKey(tdb.db, { accountId: other.id, name: 'ci' });

    expect(await revokeApiKey(tdb.db, { accountId: mine.id, id: theirs.id })).toBe('not_found');
    expect(await revokeApiKey(tdb.db, { accountId: mine.id, id: randomUUID() })).toBe('not_found');
    expect(await revokeApiKey(tdb.db, { accountId: mine.id, id: apiKey.id })).toBe('revoked');
    expect(await revokeApiKey(tdb.db, { accountId: mine.id, id: apiKey.id })).toBe('already_revoked');

    const [revoked] = await listApiKeys(tdb.db, mine.id);
    expect(revoked?.revokedAt).toBeInstanceOf(Date);
    const [untouched] = await listApiKeys(tdb.db, other.id);
    expect(untouched?.revokedAt).toBeNull();
  });
});

describe('accountByPassword', () => {
  it('finds the account by its email in any case and the right password only', async () => {
    const a = await account('correct horse');
    expect((await accountByPassword(tdb.db, a.email.toUpperCase(), 'correct horse'))?.id).toBe(a.id);
    expect(await accountByPassword(tdb.db, a.email, 'wrong horse')).toBeUndefined();
    expect(
      await accountByPassword(tdb.db, `nobody-${randomUUID()}@example.com`, 'correct horse'),
    ).toBeUndefined();
    expect(await accountByPassword(tdb.db, '__proto__', '__proto__')).toBeUndefined();
  });
});
