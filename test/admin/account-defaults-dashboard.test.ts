import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountsStore } from '../../src/features/accounts/accounts-store.ts';
import { createDashboardAccount, FormClient, type DashboardAccount } from '../helpers/dashboard.ts';
import { startTestService, type TestService } from '../helpers/test-service.ts';

/** The dashboard's account defaults form (automatic reminders, approver verification), over plain HTTP. */

let service: TestService;
let origin: string;
let holder: DashboardAccount;

beforeAll(async () => {
  service = await startTestService({ worker: false });
  origin = service.api.url.replace('localhost', '127.0.0.1');
  holder = await createDashboardAccount(service);
}, 120_000);
afterAll(() => service.close());

const stored = async () => {
  const a = (await accountsStore(service.database.db).findById(holder.accountId))!;
  return { reminders: a.defaultReminders, verification: a.defaultVerification };
};

describe('account defaults in the dashboard', () => {
  it('saves and shows them, refuses bad values (422, in the language of the page) and posts without the CSRF token (403)', async () => {
    const client = new FormClient(origin);
    const csrf = await client.signIn(holder.email, holder.password);
    const form = (fields: Record<string, string>) =>
      client.post('/admin/api/defaults', { _csrf: csrf, ...fields });

    const page = await (await client.get('/admin/api')).text();
    expect(page).toContain('Defaults for new documents');
    expect(page).toMatch(/<option value="none"\s+selected/);

    const saved = await form({
      first_after_hours: '24',
      every_hours: '48',
      max: '3',
      default_verification: 'whatsapp_otp',
    });
    expect(saved.status).toBe(303);
    expect(saved.headers.get('location')).toBe('/admin/api?m=defaults_saved');
    expect(await stored()).toEqual({
      reminders: { first_after_hours: 24, every_hours: 48, max: 3 },
      verification: 'whatsapp_otp',
    });
    const shown = await (await client.get('/admin/api?m=defaults_saved')).text();
    expect(shown).toContain('The defaults were saved.');
    expect(shown).toMatch(/name="first_after_hours"[^>]*value="24"/);
    expect(shown).toMatch(/name="max"[^>]*value="3"/);
    expect(shown).toMatch(/<option value="whatsapp_otp"\s+selected/);

    for (const [fields, message] of [
      [
        { first_after_hours: '24', every_hours: '', max: '3', default_verification: 'none' },
        'all three reminder fields',
      ],
      [
        { first_after_hours: '0', every_hours: '1', max: '1', default_verification: 'none' },
        'whole number from 1 to 8760',
      ],
      [
        { first_after_hours: '1', every_hours: '1', max: '1.5', default_verification: 'none' },
        'whole number from 0 to 100',
      ],
      [
        { first_after_hours: '', every_hours: '', max: '', default_verification: 'sms' },
        'Choose a verification method',
      ],
    ] as const) {
      const refused = await form(fields);
      expect(refused.status, JSON.stringify(fields)).toBe(422);
      const text = await refused.text();
      expect(text).toContain(message);
      expect(text).toContain('aria-invalid="true"');
    }
    const arabic = await client.post('/admin/api/defaults?lang=ar', {
      _csrf: csrf,
      first_after_hours: '0',
      every_hours: '1',
      max: '1',
      default_verification: 'none',
    });
    expect(arabic.status).toBe(422);
    expect(await arabic.text()).toContain('أدخل عددًا صحيحًا');
    expect(await stored()).toEqual({
      reminders: { first_after_hours: 24, every_hours: 48, max: 3 },
      verification: 'whatsapp_otp',
    });

    const forged = await client.post('/admin/api/defaults', {
      first_after_hours: '',
      every_hours: '',
      max: '',
      default_verification: 'none',
    });
    expect(forged.status).toBe(403);
    expect((await stored()).verification).toBe('whatsapp_otp');

    // All three reminder fields empty: back to the server's default.
    const cleared = await form({
      first_after_hours: '',
      every_hours: '',
      max: '',
      default_verification: 'none',
    });
    expect(cleared.status).toBe(303);
    expect(await stored()).toEqual({ reminders: null, verification: 'none' });
    await client.close();
  }, 60_000);
});
