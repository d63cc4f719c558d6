import { spawnSync } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpCode } from '../../src/auth/totp.ts';
import { launchBrowser } from '../helpers/browser.ts';
import { createDashboardAccount, type DashboardAccount } from '../helpers/dashboard.ts';
import { startTestService, type TestService } from '../helpers/test-service.ts';

/**
 * Two-step sign-in as an account holder meets it, in Debian's Chromium: the QR code on the page is read back
 * with zbarimg (as a phone's camera would), the app's codes are computed from the secret it carries, and the
 * holder signs in with one. The dashboard's clock is held by the test so the codes are for known moments.
 */

const ARTIFACTS = path.resolve('test-artifacts');

let service: TestService;
let base: string;
let holder: DashboardAccount;
let browser: Awaited<ReturnType<typeof launchBrowser>>;
let page: Page;
let clock = new Date(Math.floor(Date.now() / 30_000) * 30_000);

beforeAll(async () => {
  service = await startTestService({ worker: false, now: () => clock });
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

const later = (seconds: number) => {
  clock = new Date(clock.getTime() + seconds * 1000);
};

/** What a phone's camera reads from the QR code on the page. */
async function scanQr(): Promise<string> {
  const file = path.join(ARTIFACTS, 'admin-totp-qr.png');
  await page.locator('#totp-qr').screenshot({ path: file });
  const read = spawnSync('zbarimg', ['-q', '--raw', file], { encoding: 'utf8' });
  expect(read.status).toBe(0);
  return read.stdout.trim();
}

async function signInWithPassword(): Promise<void> {
  await page.goto(`${base}/admin/login`);
  await page.getByLabel('Email').fill(holder.email);
  await page.getByLabel('Password').fill(holder.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

let secret = '';
let recoveryCodes: string[] = [];

describe('two-step sign-in in a browser', () => {
  it('enrols from the QR code, confirms with a computed code and shows the recovery codes once', async () => {
    await signInWithPassword();
    await page.waitForURL(`${base}/admin`);
    await page.getByRole('link', { name: 'Security' }).click();
    await page.waitForURL(`${base}/admin/security`);
    expect(await page.innerText('#second-factor-state')).toBe('Two-step sign-in is off.');
    await page.getByRole('button', { name: 'Set up two-step sign-in' }).click();
    await page.waitForSelector('#totp-qr');

    const uri = new URL(await scanQr());
    expect(uri.protocol).toBe('otpauth:');
    expect(uri.host).toBe('totp');
    expect(decodeURIComponent(uri.pathname)).toBe(`/Wathiq:${holder.email}`);
    expect(uri.searchParams.get('issuer')).toBe('Wathiq');
    expect(uri.searchParams.get('digits')).toBe('6');
    expect(uri.searchParams.get('period')).toBe('30');
    secret = uri.searchParams.get('secret') ?? '';
    // The key printed for typing by hand is the one in the QR code.
    expect((await page.innerText('#totp-secret')).replace(/ /g, '')).toBe(secret);
    await page.screenshot({ path: path.join(ARTIFACTS, 'admin-security-setup-en.png'), fullPage: true });

    await page.getByLabel('3. Enter the 6-digit code').fill(totpCode(secret, clock));
    await page.getByRole('button', { name: 'Turn on' }).click();
    await page.waitForSelector('#recovery-codes');
    recoveryCodes = (await page.inputValue('#recovery-codes')).trim().split('\n');
    expect(recoveryCodes).toHaveLength(10);
    expect(await page.locator(':focus').getAttribute('id')).toBe('recovery'); // announced to screen readers
    await page.getByRole('button', { name: 'Copy Recovery codes' }).click();
    await expect.poll(() => page.innerText('#copy-status')).toBe('Copied to the clipboard.');
    expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(recoveryCodes.join('\n'));

    await page.getByRole('link', { name: 'I have saved them' }).click();
    await page.waitForURL(`${base}/admin/security`);
    expect(await page.content()).not.toContain(recoveryCodes[0]);
    expect(await page.innerText('#recovery-left')).toBe('10');
  });

  it('asks for a code after the password, refuses a wrong one, and signs in with the app’s code', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/admin\/login\?m=signed_out/);
    later(30);
    await signInWithPassword();
    await page.waitForURL(`${base}/admin/login/code`);
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('Two-step sign-in');
    expect(await page.locator(':focus').getAttribute('id')).toBe('code');

    // Half signed in: the dashboard still sends the browser to sign in.
    await page.goto(`${base}/admin/api`);
    expect(new URL(page.url()).pathname).toBe('/admin/login');
    await page.goto(`${base}/admin/login/code`);

    await page.getByLabel('Code').fill(totpCode(secret, new Date(clock.getTime() + 300_000)));
    await page.getByRole('button', { name: 'Verify' }).click();
    await expect.poll(() => page.getByRole('alert').innerText()).toContain('That code is not right.');

    await page.getByLabel('Code').fill(totpCode(secret, clock));
    await page.getByLabel('Code').press('Enter');
    await page.waitForURL(`${base}/admin`);
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('Overview');
  });

  it('shows the second step in Arabic, right to left, and takes a recovery code', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/admin\/login\?m=signed_out/);
    await signInWithPassword();
    await page.waitForURL(`${base}/admin/login/code`);
    await page.getByRole('link', { name: 'العربية' }).click();
    await page.waitForURL(/\/admin\/login\/code\?lang=ar/);
    expect(await page.getAttribute('html', 'dir')).toBe('rtl');
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('التحقق بخطوتين');
    await page.screenshot({ path: path.join(ARTIFACTS, 'admin-code-ar.png'), fullPage: true });

    await page.getByLabel('الرمز').fill(recoveryCodes[0]!);
    await page.getByRole('button', { name: 'تحقّق' }).click();
    await page.waitForURL(`${base}/admin`);
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('نظرة عامة');
    await page.getByRole('link', { name: 'الأمان' }).click();
    expect(await page.innerText('#recovery-left')).toBe('9');
    await page.screenshot({ path: path.join(ARTIFACTS, 'admin-security-ar.png'), fullPage: true });
  });

  it('turns it off with the password; sign-in then asks only for the password', async () => {
    await page.getByRole('link', { name: 'English' }).click();
    await page.getByLabel('Or your password').fill(holder.password);
    await page.getByRole('button', { name: 'Turn off' }).click();
    await page.waitForURL(`${base}/admin/security?m=second_factor_off`);
    expect(await page.getByRole('status').first().innerText()).toContain('Two-step sign-in is off:');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/admin\/login\?m=signed_out/);
    await signInWithPassword();
    await page.waitForURL(`${base}/admin`);
  });
});
