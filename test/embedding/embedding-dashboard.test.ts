import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountsStore } from '../../src/features/accounts/accounts-store.ts';
import { createDashboardAccount, FormClient, type DashboardAccount } from '../helpers/dashboard.ts';
import { startTestService, type TestService } from '../helpers/test-service.ts';

/** The dashboard's embed origins form, over plain HTTP as a browser would post it. */

let service: TestService;
let origin: string;
let holder: DashboardAccount;

beforeAll(async () => {
  service = await startTestService({ worker: false });
  origin = service.api.url.replace('localhost', '127.0.0.1');
  holder = await createDashboardAccount(service);
}, 120_000);
afterAll(() => service.close());

const stored = async () =>
  (await accountsStore(service.database.db).findById(holder.accountId))!.embedOrigins;

describe('embed origins in the dashboard', () => {
  it('saves valid origins, shows them, refuses hostile ones (422) and posts without the CSRF token (403)', async () => {
    const client = new FormClient(origin);
    const csrf = await client.signIn(holder.email, holder.password);

    const saved = await client.post('/admin/api/embed-origins', {
      _csrf: csrf,
      embed_origins:
        'https://App.example.com\r\n\r\nhttps://*.partner.example.org:8443\r\nhttps://app.example.com:443',
    });
    expect(saved.status).toBe(303);
    expect(saved.headers.get('location')).toBe('/admin/api?m=embed_saved');
    expect(await stored()).toEqual(['https://app.example.com', 'https://*.partner.example.org:8443']);
    const page = await (await client.get('/admin/api?m=embed_saved')).text();
    expect(page).toContain('The allowed origins were saved.');
    expect(page).toMatch(
      /<textarea[^>]*name="embed_origins"[^>]*>\s*https:\/\/app\.example\.com\nhttps:\/\/\*\.partner\.example\.org:8443<\/textarea/,
    );

    const hostile = await client.post('/admin/api/embed-origins', {
      _csrf: csrf,
      embed_origins: "https://ok.example.com\nhttps://x.example.com; script-src 'unsafe-inline'",
    });
    expect(hostile.status).toBe(422);
    const refusal = await hostile.text();
    expect(refusal).toContain('is not an https origin');
    expect(refusal).toContain('aria-invalid="true"');
    expect(refusal).not.toContain("script-src 'unsafe-inline'</"); // escaped, never raw
    expect(await stored()).toEqual(['https://app.example.com', 'https://*.partner.example.org:8443']);

    const tooMany = Array.from({ length: 11 }, (_, i) => `https://a${i}.example.com`).join('\n');
    expect(
      (await client.post('/admin/api/embed-origins', { _csrf: csrf, embed_origins: tooMany })).status,
    ).toBe(422);

    const forged = await client.post('/admin/api/embed-origins', { embed_origins: '' });
    expect(forged.status).toBe(403);
    expect(await stored()).toHaveLength(2);

    // An empty list clears them: no one may frame the page again.
    const cleared = await client.post('/admin/api/embed-origins', { _csrf: csrf, embed_origins: '' });
    expect(cleared.status).toBe(303);
    expect(await stored()).toEqual([]);
    await client.close();
  }, 60_000);
});
