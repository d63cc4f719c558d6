import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../../src/features/accounts/api-keys.ts';
import { launchBrowser } from '../helpers/browser.ts';
import { createDashboardAccount, type DashboardAccount } from '../helpers/dashboard.ts';
import { startTestService, type TestAccount, type TestService } from '../helpers/test-service.ts';
import { createTemplate, type TemplateJson } from '../templates/support.ts';
import { csvFor } from '../bulk-sends/support.ts';

/**
 * The bulk-send pages in Debian's Chromium against the real service (worker included, the console WhatsApp
 * provider): the templates list, a CSV refused row by row before anything is sent, a good one checked and sent,
 * the progress bar moving to the end, the results as CSV, Arabic right to left, and no CSP violation on the way.
 */
let service: TestService;
let base: string;
let holder: DashboardAccount;
let template: TemplateJson;
let browser: Awaited<ReturnType<typeof launchBrowser>>;
let page: Page;
const violations: string[] = [];

beforeAll(async () => {
  // One message a second for bulk sends: six rows take a few seconds, long enough to watch the bar move.
  service = await startTestService({ env: { WHATSAPP_THROUGHPUT_MPS: '2', BULK_SEND_CONCURRENCY: '1' } });
  base = service.api.url;
  holder = await createDashboardAccount(service, { name: 'Al-Noor Trading' });
  const issued = await issueApiKey(service.database.db, { accountId: holder.accountId, name: 'templates' });
  const account = {
    accountId: holder.accountId,
    authorization: `Bearer ${issued.apiKey.key}:${issued.secret}`,
  } as TestAccount;
  template = await createTemplate(service, account);
  browser = await launchBrowser();
  page = await browser.context.newPage();
  page.setDefaultTimeout(15_000);
  page.on('console', (m) => {
    if (/Content Security Policy|Refused to/i.test(m.text())) violations.push(m.text());
  });
  page.on('pageerror', (err) => violations.push(String(err)));
});

afterAll(async () => {
  await browser?.close();
  await service?.close();
});

const bulkSends = async () =>
  Number(
    (
      await service.database
        .db('bulk_sends')
        .where({ account_id: holder.accountId })
        .count<{ n: number }[]>({ n: '*' })
    )[0]!.n,
  );

describe('bulk send in the dashboard', () => {
  it('lists the templates and opens the bulk-send page', async () => {
    await page.goto(`${base}/admin/login`);
    await page.getByLabel('Email').fill(holder.email);
    await page.getByLabel('Password').fill(holder.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${base}/admin`);
    await page.getByRole('link', { name: 'Templates' }).click();
    await page.waitForURL(`${base}/admin/templates`);
    expect(await page.innerText('main')).toContain('Employment contract amendment');
    await page.getByRole('link', { name: 'Bulk send' }).click();
    await page.waitForURL(`${base}/admin/templates/${template.id}/bulk-send`);
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe(
      'Bulk send: Employment contract amendment',
    );
  });

  it('shows the errors of each bad row before anything is sent, keeping the chosen file', async () => {
    const lines = csvFor(6, 900_000).split('\n');
    lines[2] = 'Ali,12345,أ,A,966512399999'; // row 2
    lines[5] = '=1+1,966512398888,ب,B,966512397777'; // row 5: a name like a formula is text here
    lines[6] = ',966512396666,ب,B,966512395555'; // row 6: no name
    await page.setInputFiles('#csv-file', {
      name: 'bad.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from(lines.join('\n')),
    });
    const url = page.url();
    await page.getByRole('button', { name: 'Check the file' }).click();
    await page.waitForSelector('#row-errors');
    expect(page.url()).toBe(url); // checked in place
    const rows = await Promise.all(
      (await page.locator('#row-errors tbody tr').all()).map((tr) => tr.getAttribute('data-row')),
    );
    expect([...new Set(rows)]).toEqual(['2', '6']);
    expect(await page.getByRole('alert').innerText()).toContain(
      '2 of 6 rows have errors. Nothing has been sent.',
    );
    // The file is still chosen: starting now is refused the same way, and nothing is sent.
    await page.getByRole('button', { name: 'Start sending' }).click();
    await page.waitForSelector('#row-errors');
    expect(await bulkSends()).toBe(0);
  });

  it('checks a good file, starts the send and shows the progress to the end; the results download as CSV', async () => {
    await page.setInputFiles('#csv-file', {
      name: 'good.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from(csvFor(6, 910_000)),
    });
    await page.getByRole('button', { name: 'Check the file' }).click();
    await expect.poll(() => page.locator('#check-results').innerText()).toContain('All 6 rows are valid.');
    expect(await bulkSends()).toBe(0);
    await page.getByRole('button', { name: 'Start sending' }).click();
    await page.waitForURL(/\/admin\/bulk-sends\/[0-9a-f-]+$/);
    const seen = new Set<string>();
    await expect
      .poll(
        async () => {
          const value = await page.locator('#bulk-progress-bar').getAttribute('value');
          seen.add(value ?? '');
          return page.locator('[data-status]').innerText();
        },
        { timeout: 60_000, interval: 250 },
      )
      .toBe('Completed');
    expect(await page.locator('#bulk-progress-bar').getAttribute('value')).toBe('6');
    expect(await page.locator('[data-count="sent"]').innerText()).toBe('6');
    // The bar moved while the page was open (the script read the counts; the page was not reloaded).
    expect(seen.size).toBeGreaterThan(1);

    const href = await page.getByRole('link', { name: 'Download the results (CSV)' }).getAttribute('href');
    const csv = await (await page.context().request.get(`${base}${href}`)).text();
    const lines = csv
      .replace(/^\uFEFF/, '')
      .trim()
      .split('\r\n');
    expect(lines[0]).toBe('row,status,document_id,reference,document_status,errors');
    expect(lines.slice(1).map((l) => l.split(',').slice(0, 2).join(','))).toEqual(
      ['1', '2', '3', '4', '5', '6'].map((n) => `${n},sent`),
    );
  });

  it('reads right to left in Arabic', async () => {
    await page.goto(`${page.url()}?lang=ar`);
    expect(await page.getAttribute('html', 'dir')).toBe('rtl');
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('الإرسال الجماعي');
    expect(await page.locator('[data-status]').innerText()).toBe('اكتمل');
    await page.goto(`${base}/admin/templates/${template.id}/bulk-send?lang=ar`);
    expect(await page.getByRole('button', { name: 'افحص الملف' }).isVisible()).toBe(true);
  });

  it('met no CSP violation and no script error on the way', () => {
    expect(violations).toEqual([]);
  });
});
