import { randomUUID } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKeysStore } from '../../src/features/accounts/api-keys-store.ts';
import { startTestService, type TestService } from '../helpers/test-service.ts';
import { launchBrowser } from '../helpers/browser.ts';
import { createDashboardAccount, type DashboardAccount } from '../helpers/dashboard.ts';
import { webhookSecretContext } from '../../src/db/sealed-columns.ts';

/**
 * The dashboard as an account holder uses it: Debian's Chromium driven by playwright-core against the real
 * service (Koa, PostgreSQL, Temporal worker). The steps run in order and share one browser profile.
 */

const ARTIFACTS = path.resolve('test-artifacts');

let service: TestService;
let base: string;
let holder: DashboardAccount;
let browser: Awaited<ReturnType<typeof launchBrowser>>;
let page: Page;
let created: { key: string; secret: string };

/** The dashboard's clock: real time, or held still (and played forward) while a test sets it. */
let heldClock: Date | undefined;

beforeAll(async () => {
  service = await startTestService({ now: () => heldClock ?? new Date() });
  base = service.api.url;
  holder = await createDashboardAccount(service, { name: 'Al-Noor Trading' });
  browser = await launchBrowser();
  await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
  page = await browser.context.newPage();
  page.setDefaultTimeout(10_000);
  await mkdir(ARTIFACTS, { recursive: true });
});

afterAll(async () => {
  await browser?.close();
  await service?.close();
});

function api(pathname: string, credentials: { key: string; secret: string }, init: RequestInit = {}) {
  return fetch(`${base}/api/v1${pathname}`, {
    ...init,
    headers: {
      authorization: `Bearer ${credentials.key}:${credentials.secret}`,
      'content-type': 'application/json',
    },
  });
}

// The tests compile without the DOM library (the project is Node-only), so code that runs in the page is
// passed as strings.
async function unlabelledInputs(): Promise<string[]> {
  return page.evaluate<string[]>(
    `[...document.querySelectorAll('input:not([type="hidden"])')].filter((i) => !i.labels?.length).map((i) => i.outerHTML)`,
  );
}

const focused = () => page.locator(':focus');

describe('the dashboard in a browser', () => {
  it('sends a visitor to the sign-in page, refuses a wrong password, and signs in', async () => {
    await page.goto(`${base}/admin`);
    expect(new URL(page.url()).pathname).toBe('/admin/login');
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('Sign in');

    // The email field has focus on arrival.
    expect(await focused().getAttribute('id')).toBe('email');

    await page.getByLabel('Email').fill(holder.email);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect
      .poll(() => page.getByRole('alert').innerText())
      .toContain('The email or password is incorrect.');
    expect(await page.getByLabel('Email').inputValue()).toBe(holder.email);

    await page.getByLabel('Password').fill(holder.password);
    await page.getByLabel('Password').press('Enter');
    await page.waitForURL(`${base}/admin`);
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('Overview');
    expect(await page.innerText('main')).toContain('Welcome, Al-Noor Trading');
    expect(await page.innerText('main')).toContain('No documents yet.');
    expect(await page.innerText('main')).toContain('No webhooks yet.');

    // The first Tab reaches the skip link, which moves focus to the main content.
    await page.keyboard.press('Tab');
    expect(await focused().innerText()).toBe('Skip to main content');
    await page.keyboard.press('Enter');
    expect(await focused().getAttribute('id')).toBe('main');
  });

  it('creates a key, shows its secret once with a copy button, and the key works on the API', async () => {
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.waitForURL(`${base}/admin/api`);
    expect(await page.innerText('#plan-line')).toBe(
      'Business plan: up to 300 requests per minute for each key.',
    );
    expect(await unlabelledInputs()).toEqual([]);

    await page.getByLabel('Name', { exact: true }).fill('ERP production');
    await page.getByLabel(/Create, change and delete webhooks/).uncheck();
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.waitForSelector('#new-key');

    const key = await page.inputValue('#new-key-id');
    const secret = await page.inputValue('#new-key-secret');
    expect(key).toMatch(/^wq_[A-Za-z0-9]{24}$/);
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await page.inputValue('#new-key-header')).toBe(`Authorization: Bearer ${key}:${secret}`);
    expect(await focused().getAttribute('id')).toBe('new-key'); // announced to screen readers
    created = { key, secret };

    await page.getByRole('button', { name: 'Copy Secret' }).click();
    await expect.poll(() => page.innerText('#copy-status')).toBe('Copied to the clipboard.');
    expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(secret);

    const row = page.locator('tbody tr', { hasText: 'ERP production' });
    expect(await row.innerText()).toContain(key.slice(0, 11));
    expect(await row.innerText()).not.toContain('webhooks:write');
    await page.screenshot({ path: path.join(ARTIFACTS, 'admin-keys-en.png'), fullPage: true });

    const listed = await api('/documents', created);
    expect(listed.status).toBe(200);
    expect(((await listed.json()) as { data: unknown[] }).data).toEqual([]);

    await page.goto(`${base}/admin/api`);
    expect(await page.content()).not.toContain(secret);
    expect(await page.locator('#new-key').count()).toBe(0);
  });

  it('switches to Arabic: right to left, Arabic labels, and a key created from the keyboard', async () => {
    await page.getByRole('link', { name: 'العربية' }).click();
    await page.waitForURL(/lang=ar/);
    expect(await page.getAttribute('html', 'dir')).toBe('rtl');
    expect(await page.getAttribute('html', 'lang')).toBe('ar');
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('مفاتيح API');
    expect(await page.innerText('#plan-line')).toBe('خطة الأعمال: حتى 300 طلب في الدقيقة لكل مفتاح.');
    // The table starts on the right.
    const direction = await page.evaluate<string>(
      "getComputedStyle(document.querySelector('table')).direction",
    );
    expect(direction).toBe('rtl');

    await page.getByLabel('الاسم', { exact: true }).fill('مفتاح التكامل');
    await page.getByLabel('الاسم', { exact: true }).press('Enter');
    await page.waitForSelector('#new-key');
    expect(await page.getAttribute('html', 'dir')).toBe('rtl'); // the choice is remembered without ?lang
    expect(await page.innerText('#new-key-heading')).toBe('مفتاحك الجديد «مفتاح التكامل»');
    await page.screenshot({ path: path.join(ARTIFACTS, 'admin-keys-ar.png'), fullPage: true });

    await page.getByRole('link', { name: 'English' }).click();
    await page.waitForURL(`${base}/admin/api?lang=en`);
    expect(await page.getAttribute('html', 'dir')).toBe('ltr');
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('API keys');
  });

  it('asks before revoking, revokes in the page, and the API refuses the key from the next request', async () => {
    await page.goto(`${base}/admin/api`);
    page.once('dialog', (dialog) => void dialog.dismiss());
    await page.getByRole('button', { name: 'Revoke the key “ERP production”' }).click();
    expect(new URL(page.url()).search).toBe(''); // dismissed: nothing was sent
    expect((await api('/documents/00000000-0000-4000-8000-000000000000', created)).status).toBe(404);

    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Revoke the key “ERP production”' }).click();
    await page.waitForURL(`${base}/admin/api?m=revoked`);
    expect(await page.getByRole('status').first().innerText()).toContain('The key has been revoked.');
    const row = page.locator('tbody tr', { hasText: 'ERP production' });
    expect(await row.innerText()).toContain('Revoked');
    expect(await row.getByRole('button').count()).toBe(0);

    const refused = await api('/documents/00000000-0000-4000-8000-000000000000', created);
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(/revoked/);
  });

  it('answers 404 for another account’s key id and for a malformed id, leaving that key alone', async () => {
    const other = await service.createAccount();
    for (const id of [other.apiKeyId, 'not-a-key-id']) {
      await page.goto(`${base}/admin/api`);
      const [response] = await Promise.all([
        page.waitForResponse((r) => r.url().includes('/revoke')),
        // form.submit() skips the confirm handler, as a forged page would.
        page.evaluate(`(() => {
          const form = document.querySelector('form[action$="/revoke"]');
          form.action = ${JSON.stringify(`/admin/api/keys/${id}/revoke`)};
          form.submit();
        })()`),
      ]);
      expect(response.status()).toBe(404);
      await page.waitForLoadState();
      expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('Not found');
    }
    const [otherKey] = await apiKeysStore(service.database.db).listByAccount(other.accountId);
    expect(otherKey?.revokedAt).toBeNull();
  });

  it('refuses a POST without the CSRF token, even with the browser’s own session cookie (403)', async () => {
    const cookies = await browser.context.cookies(`${base}/admin`);
    const session = cookies.find((c) => c.name === 'wathiq_admin_session');
    expect(session?.httpOnly).toBe(true);
    expect(session?.sameSite).toBe('Strict');
    expect(session?.path).toBe('/admin');
    const before = (await apiKeysStore(service.database.db).listByAccount(holder.accountId)).length;
    const res = await fetch(`${base}/admin/api/keys`, {
      method: 'POST',
      headers: {
        cookie: `wathiq_admin_session=${session!.value}`,
        origin: base,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ name: 'forged', scopes: 'documents:write' }),
    });
    expect(res.status).toBe(403);
    expect(await res.text()).toContain('This form has expired or did not come from this dashboard.');
    expect(await apiKeysStore(service.database.db).listByAccount(holder.accountId)).toHaveLength(before);
  });

  it('shows documents by status with approver progress, and webhooks with their last delivery', async () => {
    const db = service.database.db;
    const documentId = randomUUID();
    await db('documents').insert({
      id: documentId,
      account_id: holder.accountId,
      reference: 'WQT-2026-000001',
      title_ar: 'عقد توريد',
      title_en: 'Supply contract',
      status: 'in_progress',
      expires_at: new Date(Date.now() + 7 * 86_400_000),
      file_key: 'test/file.pdf',
      file_sha256: 'a'.repeat(64),
      file_size: 1234,
      page_count: 2,
    });
    await db('approvers').insert([
      {
        document_id: documentId,
        account_id: holder.accountId,
        name_ar: 'سارة',
        name_en: 'Sara',
        phone: '966501234567',
        order_index: 1,
        status: 'completed',
        acted_at: new Date(),
      },
      {
        document_id: documentId,
        account_id: holder.accountId,
        name_ar: 'خالد',
        name_en: 'Khalid',
        phone: '966501234568',
        order_index: 2,
        status: 'notified',
      },
    ]);
    const webhookId = randomUUID();
    const [webhook] = await db('webhooks')
      .insert({
        id: webhookId,
        account_id: holder.accountId,
        url: 'https://erp.example/hooks/wathiq',
        events: ['document.approved'],
        secret_sealed: service.deps.secrets.seal('whsec_test', webhookSecretContext(webhookId)),
      })
      .returning<{ id: string }[]>('id');
    await db('webhook_deliveries').insert({
      webhook_id: webhook!.id,
      account_id: holder.accountId,
      event: 'document.approved',
      body_sealed: 'never read here',
      status: 'failed',
      attempt_count: 8,
      last_status_code: 500,
    });
    const other = await service.createAccount();
    const otherDocument = randomUUID();
    await db('documents').insert({
      id: otherDocument,
      account_id: other.accountId,
      reference: 'WQT-2026-000001',
      title_ar: 'سري',
      title_en: 'Secret of another account',
      expires_at: new Date(Date.now() + 86_400_000),
      file_key: 'test/other.pdf',
      file_sha256: 'b'.repeat(64),
      file_size: 1,
      page_count: 1,
    });

    await page.goto(`${base}/admin`);
    const main = (await page.innerText('main')) ?? '';
    expect(main).not.toContain('Secret of another account');
    expect(await page.innerText('.status-counts li[data-status="in_progress"] .count')).toBe('1');
    expect(await page.innerText('.status-counts li.total .count')).toBe('1');
    const docRow = page.locator('tbody tr', { hasText: 'WQT-2026-000001' });
    expect(await docRow.innerText()).toContain('Supply contract');
    expect(await docRow.innerText()).toContain('1 of 2 done');
    const hookRow = page.locator('tbody tr', { hasText: 'https://erp.example/hooks/wathiq' });
    expect(await hookRow.innerText()).toContain('Failed');
    expect(await hookRow.innerText()).toContain('HTTP 500');
    await page.screenshot({ path: path.join(ARTIFACTS, 'admin-overview-en.png'), fullPage: true });

    await page.getByRole('link', { name: 'WQT-2026-000001' }).click();
    await page.waitForURL(`${base}/admin/documents/${documentId}`);
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('Document WQT-2026-000001');
    const approvers = await page
      .locator('section[aria-labelledby="approvers-heading"] tbody tr')
      .allTextContents();
    expect(approvers[0]).toContain('Sara');
    expect(approvers[1]).toContain('Khalid');

    const foreign = await page.goto(`${base}/admin/documents/${otherDocument}`);
    expect(foreign?.status()).toBe(404);
  });

  it('signs out; the dashboard then asks to sign in again', async () => {
    await page.goto(`${base}/admin`);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${base}/admin/login?m=signed_out`);
    expect(await page.getByRole('status').innerText()).toBe('You have signed out.');
    expect(
      (await browser.context.cookies(`${base}/admin`)).some((c) => c.name === 'wathiq_admin_session'),
    ).toBe(false);
    await page.goto(`${base}/admin/api`);
    expect(new URL(page.url()).pathname).toBe('/admin/login');
  });

  it('pauses sign-in after three wrong passwords, even for the right one, until the wait is over', async () => {
    const victim = await createDashboardAccount(service);
    heldClock = new Date();
    try {
      await page.goto(`${base}/admin/login`);
      const messages: string[] = [];
      for (let i = 0; i < 3; i++) {
        await page.getByLabel('Email').fill(victim.email);
        await page.getByLabel('Password').fill(`wrong-${i}`);
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.waitForLoadState();
        messages.push((await page.getByRole('alert').innerText()) ?? '');
      }
      expect(messages[0]).toContain('The email or password is incorrect.');
      expect(messages[1]).toContain('Failed attempts left before each further attempt has to wait: 1.');
      expect(messages[2]).toContain('Seconds to wait before the next attempt: 1.');

      const signIn = async () => {
        await page.getByLabel('Email').fill(victim.email);
        await page.getByLabel('Password').fill(victim.password);
        const [response] = await Promise.all([
          page.waitForResponse((r) => r.url().endsWith('/admin/login') && r.request().method() === 'POST'),
          page.getByRole('button', { name: 'Sign in' }).click(),
        ]);
        return response;
      };
      const refused = await signIn();
      expect(refused.status()).toBe(429);
      expect(await refused.headerValue('retry-after')).toBe('1');
      expect(await page.getByRole('alert').innerText()).toContain(
        'Seconds to wait before the next attempt: 1.',
      );
      expect(new URL(page.url()).pathname).toBe('/admin/login');

      heldClock = new Date(heldClock.getTime() + 1000);
      expect((await signIn()).status()).toBe(303);
      await page.waitForURL(`${base}/admin`);
      expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('Overview');
    } finally {
      heldClock = undefined;
    }
  });
});
