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

/** The delegation step of the approval page, in Debian's Chromium against the real service. */
const ARTIFACTS = path.resolve('test-artifacts');

let h: FlowHarness;
let browser: Awaited<ReturnType<typeof launchBrowser>>;
let page: Page;

beforeAll(async () => {
  h = await startFlowHarness({ env: { OTP_IP_PER_MINUTE: '1000' } });
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

describe('the delegation step of the approval page', () => {
  it.each([
    {
      lang: 'ar',
      phone: PHONES.saudiC,
      otp: true,
      delegatePhone: PHONES.saudiB,
      delegateName: 'سلمان الحربي',
      open: 'تفويض شخص آخر',
      needReason: 'اذكر سبب التفويض.',
      taken: 'هذا الرقم معتمِد في هذا المستند بالفعل',
      done: 'لقد فوّضت خطوتك إلى سلمان الحربي',
      closed: 'لقد فوّضت خطوتك في هذا المستند إلى شخص آخر.',
    },
    {
      lang: 'en',
      phone: PHONES.uk,
      otp: false,
      delegatePhone: PHONES.saudiA,
      delegateName: 'Marguerite Osei',
      open: 'Delegate to someone else',
      needReason: 'Give a reason for delegating.',
      taken: 'This number is already an approver of this document',
      done: 'You delegated your step to Marguerite Osei',
      closed: 'You delegated your step on this document to someone else.',
    },
  ] as const)(
    'hands the step to someone else, who is then notified ($lang)',
    async (c) => {
      const approver: ApproverSpec & { verification: 'none' | 'whatsapp_otp' } = {
        name: 'Delegating Approver',
        phone: c.phone,
        action_type: 'sign',
        verification: c.otp ? 'whatsapp_otp' : 'none',
      };
      const other: ApproverSpec = {
        name: 'Other Approver',
        phone: PHONES.saudiA,
        action_type: 'approve_only',
      };
      const doc = await createDocument(h, {
        workflowType: 'sequential',
        approvers: c.lang === 'ar' ? [approver, other] : [approver],
        fields: { allow_delegation: 'true' },
      });
      await send(h, doc.id);
      const token = linkTokenOf(await requestFor(h, c.phone, doc.id));
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(e.message));
      await page.goto(`${h.service.api.url}/a/${token}?lang=${c.lang}`);
      expect(await page.getAttribute('html', 'lang')).toBe(c.lang);

      if (c.otp) {
        // A verified approver passes the code step before the delegation step appears.
        expect(await page.isVisible('#delegate-step')).toBe(false);
        const before = otpCodes(c.phone).length;
        await page.click('#send-code');
        await page.waitForSelector('#code-form:not([hidden])');
        const code = await eventually(() => otpCodes(c.phone)[before]);
        await page.fill('#otp-code', code);
        await page.click('#verify-code');
        await page.waitForSelector('#approve-form:not([hidden])');
      }
      expect(await page.textContent('#delegate-step summary')).toBe(c.open);
      await page.click('#delegate-step summary');
      await page.fill('#delegate-name', c.delegateName);
      await page.fill('#delegate-phone', `+${c.delegatePhone}`);
      // A reason is required: the page says so before asking the server.
      await page.click('#submit-delegate');
      await expect.poll(() => page.textContent('#delegate-error')).toBe(c.needReason);
      await page.fill('#delegate-reason', c.lang === 'ar' ? 'في إجازة' : 'On leave this week');
      if (c.lang === 'ar') {
        // The server's refusal of a number already on the document, in the page's language.
        await page.fill('#delegate-phone', `+${PHONES.saudiA}`);
        await page.click('#submit-delegate');
        await expect.poll(() => page.textContent('#delegate-error')).toContain(c.taken);
        await page.fill('#delegate-phone', `+${c.delegatePhone}`);
      }
      await page.screenshot({
        path: path.join(ARTIFACTS, `approval-delegate-${c.lang}.png`),
        fullPage: true,
      });
      await page.click('#submit-delegate');
      await page.waitForSelector('#done:not([hidden])');
      expect(await page.textContent('#done-text')).toContain(c.done);
      expect(await page.isVisible('#approve-form')).toBe(false);
      expect(await page.isVisible('#delegate-step')).toBe(false);
      expect(errors).toEqual([]);

      // The delegate is notified and is now the one the document waits for.
      await requestFor(h, c.delegatePhone, doc.id, 60_000);
      const status = await statusOf(h, doc.id);
      expect(status.approvers[0]!.status).toBe('delegated');
      expect(status.current_approver_ids).toEqual([status.approvers[1]!.id]);
      // The spent link now shows the closed page.
      await page.reload();
      expect(await page.locator('#delegate-step').count()).toBe(0);
      expect(await page.textContent('main, body')).toContain(c.closed);
    },
    120_000,
  );

  it('offers no delegation step when the document does not allow it', async () => {
    const doc = await createDocument(h, {
      workflowType: 'sequential',
      approvers: [{ name: 'Plain Approver', phone: PHONES.saudiB, action_type: 'approve_only' }],
    });
    await send(h, doc.id);
    const token = linkTokenOf(await requestFor(h, PHONES.saudiB, doc.id));
    await page.goto(`${h.service.api.url}/a/${token}?lang=en`);
    await page.waitForSelector('#approve-form');
    expect(await page.locator('#delegate-step').count()).toBe(0);
  }, 60_000);

  it('a page left open says why the server refused, in its language: the step was delegated elsewhere', async () => {
    const doc = await createDocument(h, {
      workflowType: 'sequential',
      approvers: [{ name: 'Two Tabs', phone: PHONES.saudiC, action_type: 'approve_only' }],
      fields: { allow_delegation: 'true' },
    });
    await send(h, doc.id);
    const token = linkTokenOf(await requestFor(h, PHONES.saudiC, doc.id));
    await page.goto(`${h.service.api.url}/a/${token}?lang=ar`);
    await page.click('#delegate-step summary');
    // Meanwhile the approver delegates from another tab.
    const elsewhere = await fetch(`${h.service.api.url}/a/${token}/delegate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Other Tab', phone: `+${PHONES.saudiB}`, reason: 'من نافذة أخرى' }),
    });
    expect(elsewhere.status).toBe(200);
    await page.fill('#delegate-name', 'سلمان الحربي');
    await page.fill('#delegate-phone', `+${PHONES.saudiA}`);
    await page.fill('#delegate-reason', 'في إجازة');
    await page.click('#submit-delegate');
    // The server's own words (410: delegated), not the page's generic "no longer available".
    await expect
      .poll(() => page.textContent('#delegate-error'))
      .toBe('لقد فوّضت خطوتك في هذا المستند إلى شخص آخر.');
  }, 60_000);
});
