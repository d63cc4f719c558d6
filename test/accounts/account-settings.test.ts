import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountSettings } from '../../src/features/accounts/account-settings.ts';
import { accountsStore } from '../../src/features/accounts/accounts-store.ts';
import { AppError } from '../../src/errors.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.ts';

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});

async function account(): Promise<string> {
  const a = await accountsStore(tdb.db).create({
    name: 'Acme',
    email: `${randomUUID()}@example.com`,
    passwordHash: 'x',
    plan: 'business',
  });
  return a.id;
}

describe('accountSettings', () => {
  it('changes only the settings given and stores an origin given twice once', async () => {
    const id = await account();
    const settings = accountSettings(tdb.db);
    const reminders = { first_after_hours: 24, every_hours: 48, max: 3 };
    await settings.update(id, { defaultReminders: reminders, defaultVerification: 'whatsapp_otp' });

    const updated = await settings.update(id, {
      embedOrigins: ['https://a.example.com', 'https://b.example.com', 'https://a.example.com'],
    });

    expect(updated.embedOrigins).toEqual(['https://a.example.com', 'https://b.example.com']);
    expect(updated.defaultReminders).toEqual(reminders);
    expect(updated.defaultVerification).toBe('whatsapp_otp');
    expect(await settings.get(id)).toEqual(updated);
  });

  it('reads the account unchanged for an empty change', async () => {
    const id = await account();
    const settings = accountSettings(tdb.db);
    const before = await settings.get(id);
    expect(await settings.update(id, {})).toEqual(before);
  });

  it('answers not_found for an account that does not exist, reading or changing', async () => {
    const settings = accountSettings(tdb.db);
    const missing = randomUUID();
    for (const attempt of [settings.get(missing), settings.update(missing, { embedOrigins: [] })]) {
      const error = await attempt.catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AppError);
      expect(error).toMatchObject({ type: 'not_found', status: 404 });
    }
  });
});
