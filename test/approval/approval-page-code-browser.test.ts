import path from 'node:path';
import { mkdir } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../helpers/browser.ts';
import {
  createDocument,
  eventually,
  linkTokenOf,
  otpCodesTo,
  requestFor,
  PHONES,
  send,
  startFlowHarness,
  statusOf,
  type ApproverSpec,
  type FlowHarness,
} from '../helpers/approval-flow.ts';

/** The code step of a verified approver (issue 15 item 2), in Debian's Chromium against the real service. */
const ARTIFACTS = path.resolve('test-artifacts');

let h: FlowHarness;
let browser: Awaited<ReturnType<typeof launchBrowser>>;
let page: Page;

beforeAll(async () => {
  h = await startFlowHarness();
  browser = await launchBrowser();
  page = await browser.context.newPage();
  await page.setViewportSize({ width: 390, height: 844 });
  page.setDefaultTimeout(15_000);
  await mkdir(ARTIFACTS, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
  await h?.close();
});

const otpCodes = (phone: string): string[] => otpCodesTo(h, phone);

describe('the code step of the approval page', () => {
  it.each([
    {
      lang: 'ar',
      phone: PHONES.saudiC,
      title: 'تأكيد هويتك',
      sent: 'تم إرسال رمز',
      wrong: 'الرمز غير صحيح',
      done: 'تم تسجيل إجرائك',
    },
    {
      lang: 'en',
      phone: PHONES.uk,
      title: 'Confirm it is you',
      sent: 'A code has been sent',
      wrong: 'That code is not right',
      done: 'Your action has been recorded',
    },
  ] as const)(
    'asks for the WhatsApp code before the approver can act ($lang)',
    async (c) => {
      const verified: ApproverSpec & { verification: 'whatsapp_otp' } = {
        name: 'Verified Approver',
        phone: c.phone,
        action_type: 'approve_only',
        verification: 'whatsapp_otp',
      };
      const doc = await createDocument(h, { workflowType: 'sequential', approvers: [verified] });
      await send(h, doc.id);
      const token = linkTokenOf(await requestFor(h, c.phone, doc.id));
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(e.message));
      await page.goto(`${h.service.api.url}/a/${token}?lang=${c.lang}`);
      expect(await page.getAttribute('html', 'lang')).toBe(c.lang);

      // Only the code step until a right code is entered: nothing of the document, not even in the <title> a link
      // preview shows, nor any name.
      expect(await page.textContent('#code-title')).toBe(c.title);
      const { name: accountName } = await h.service.database
        .db('accounts')
        .where({ id: h.account.accountId })
        .first<{ name: string }>();
      const secrets = ['عقد توريد', 'Supply contract', doc.reference, verified.name, accountName];
      const preview = await fetch(page.url(), { headers: { 'user-agent': 'WhatsApp/2.23.20.0 A' } });
      for (const html of [await page.content(), await preview.text()])
        for (const secret of secrets) expect(html).not.toContain(secret);
      expect(await page.title()).toBe(
        c.lang === 'ar' ? 'اعتماد مستند · Wathiq' : 'Document approval · Wathiq',
      );
      expect(await page.isVisible('#approve-form')).toBe(false);
      expect(await page.isVisible('details.reject')).toBe(false);
      // Nor the document: its viewer stays hidden and empty (the PDF itself answers 403 until the code).
      expect(await page.isVisible('section.viewer')).toBe(false);
      expect(await page.locator('#pdf-pages canvas').count()).toBe(0);

      const before = otpCodes(c.phone).length;
      await page.click('#send-code');
      await page.waitForSelector('#code-sent:not([hidden])');
      expect(await page.textContent('#code-sent')).toContain(c.sent);
      const code = await eventually(() => otpCodes(c.phone)[before]);
      await page.screenshot({ path: path.join(ARTIFACTS, `approval-code-${c.lang}.png`), fullPage: true });

      await page.fill('#otp-code', code === '000000' ? '111111' : '000000');
      await page.click('#verify-code');
      await expect.poll(() => page.textContent('#code-error')).toContain(c.wrong);
      expect(await page.isVisible('#approve-form')).toBe(false);

      await page.fill('#otp-code', code);
      await page.click('#verify-code');
      await page.waitForSelector('#approve-form:not([hidden])');
      expect(await page.isVisible('#code-step')).toBe(false);
      // Verified: the page is the whole page now, and the PDF is fetched and drawn.
      await page.waitForSelector('#pdf-pages canvas');
      expect(await page.isVisible('section.viewer')).toBe(true);
      expect(await page.textContent('#doc-title')).toBe('عقد توريد — Supply contract');

      // The proof is a cookie the page's script cannot read.
      expect(await page.evaluate('document.cookie')).toBe('');
      // Reloaded, the page remembers the proof and skips the code step.
      await page.reload();
      expect(await page.locator('#code-step').count()).toBe(0);

      await page.click('#submit-action');
      await page.waitForSelector('#done:not([hidden])');
      expect(await page.textContent('#done-text')).toContain(c.done);
      expect(errors).toEqual([]);
      await eventually(async () => (await statusOf(h, doc.id)).status === 'approved', 60_000);
    },
    120_000,
  );
});
