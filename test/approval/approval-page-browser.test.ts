import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../helpers/browser.ts';
import {
  createDocument,
  eventually,
  linkTokenOf,
  requestFor,
  PHONES,
  send,
  startFlowHarness,
  statusOf,
  type FlowHarness,
} from '../helpers/approval-flow.ts';
import { chunk, dataUrl, ihdr, pngOf } from '../helpers/png.ts';

/** The approval page as an approver on a phone uses it: Debian's Chromium against the real service. */
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

describe('the approval page in a browser', () => {
  it('shows the PDF right-to-left in Arabic, takes a drawn signature, and records it', async () => {
    const doc = await createDocument(h, {
      workflowType: 'sequential',
      approvers: [{ name: 'سارة المطيري', phone: PHONES.saudiA, action_type: 'sign' }],
    });
    await send(h, doc.id);
    const token = linkTokenOf(await requestFor(h, PHONES.saudiA, doc.id));
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));

    await page.goto(`${h.service.api.url}/a/${token}`);
    expect(await page.getAttribute('html', 'dir')).toBe('rtl');
    expect(await page.getAttribute('html', 'lang')).toBe('ar');
    await expect.poll(() => page.locator('#pdf-pages canvas').count()).toBe(2); // pdf.js drew both pages
    await page.screenshot({ path: path.join(ARTIFACTS, 'approval-page-ar.png'), fullPage: true });

    // An empty signature is refused in the page, before anything is sent.
    await page.click('#submit-action');
    await expect.poll(() => page.textContent('#form-error')).toContain('ارسم توقيعك');

    await drawSignature(page);
    await page.click('#submit-action');
    await page.waitForSelector('#done:not([hidden])');
    expect(await page.textContent('#done-text')).toContain('تم تسجيل إجرائك');
    expect(errors).toEqual([]);

    const approver = (await statusOf(h, doc.id)).approvers[0]!;
    expect(approver).toMatchObject({ status: 'completed', action_channel: 'page' });
    const row = await h.service.database
      .db('approvers')
      .where({ id: approver.id })
      .first<{ signature_key: string; action_user_agent: string }>();
    expect(row.signature_key).toMatch(/\.png$/);
    expect(row.action_user_agent).toMatch(/Chrome/);
    await eventually(async () => (await statusOf(h, doc.id)).status === 'approved');

    // The link is spent: the page says so.
    const again = await page.goto(`${h.service.api.url}/a/${token}?lang=en`);
    expect(again?.status()).toBe(410);
    expect(await page.textContent('main')).toContain('already acted');
  });

  it.each([
    { lang: 'en', damaged: 'The signature image is damaged; draw it again.', empty: 'Draw your signature' },
    { lang: 'ar', damaged: 'صورة التوقيع تالفة؛ ارسمه مرة أخرى.', empty: 'ارسم توقيعك' },
  ] as const)(
    'says in the page’s language ($lang) when the server refuses the image, and takes a new drawing',
    async ({ lang, damaged, empty }) => {
      const doc = await createDocument(h, {
        workflowType: 'sequential',
        approvers: [{ name: 'عمر الحربي', phone: PHONES.saudiB, action_type: 'sign' }],
      });
      await send(h, doc.id);
      const token = linkTokenOf(await requestFor(h, PHONES.saudiB, doc.id));
      // A Saudi approver: the server's default is Arabic, so English here must come from the page.
      await page.goto(`${h.service.api.url}/a/${token}?lang=${lang}`);
      expect(await page.getAttribute('html', 'lang')).toBe(lang);
      // The PDF's pages go in above the pad: draw once they are there, or the pad moves under the pointer.
      await expect.poll(() => page.locator('#pdf-pages canvas').count()).toBe(2);

      // The drawing is swapped on the way for pixel data that does not inflate, as a damaged upload would be.
      const broken = pngOf(ihdr(600, 220), chunk('IDAT', Buffer.from('not zlib')), chunk('IEND'));
      await page.route(`**/a/${token}/complete*`, (route) =>
        route.continue({ postData: JSON.stringify({ signature_png: dataUrl(broken) }) }),
      );
      await drawSignature(page);
      await page.click('#submit-action');
      await expect.poll(() => page.textContent('#form-error')).toBe(damaged);
      await page.unroute(`**/a/${token}/complete*`);
      expect((await statusOf(h, doc.id)).approvers[0]?.status).not.toBe('completed');

      // The pad was cleared to be drawn again: submitting it empty is refused in the page.
      await page.click('#submit-action');
      await expect.poll(() => page.textContent('#form-error')).toContain(empty);
      await drawSignature(page);
      await page.click('#submit-action');
      await page.waitForSelector('#done:not([hidden])');
      await eventually(async () => (await statusOf(h, doc.id)).status === 'approved');
    },
  );
});

async function drawSignature(page: Page): Promise<void> {
  const pad = page.locator('#signature-pad');
  await pad.scrollIntoViewIfNeeded();
  const box = (await pad.boundingBox())!;
  await page.mouse.move(box.x + 20, box.y + box.height / 2);
  await page.mouse.down();
  for (let i = 0; i <= 30; i++)
    await page.mouse.move(box.x + 20 + i * 9, box.y + box.height / 2 + Math.sin(i / 3) * 25);
  await page.mouse.up();
}
