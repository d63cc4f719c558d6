import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, PHONE } from '../helpers/browser.ts';
import {
  createDocument,
  eventually,
  linkTokenOf,
  PHONES,
  requestFor,
  send,
  startFlowHarness,
  statusOf,
  type FlowHarness,
} from '../helpers/approval-flow.ts';
import { longContract } from '../helpers/contract-pdf.ts';
import { axeViolations, touchSession, waitForPage } from '../helpers/phone-page.ts';

/**
 * The approval page in a phone's hands (412 × 915, devicePixelRatio 3, touch events through Chromium's input
 * pipeline): zoom by buttons and by pinch, the action in reach, a signature drawn with a finger, the phone turned,
 * and no serious accessibility fault in Arabic or English.
 */
let h: FlowHarness;
let browser: Awaited<ReturnType<typeof launchBrowser>>;
let page: Page;

beforeAll(async () => {
  h = await startFlowHarness();
  browser = await launchBrowser(PHONE);
  page = await browser.context.newPage();
  page.setDefaultTimeout(30_000);
});
afterAll(async () => {
  await browser?.close();
  await h?.close();
});

async function open(
  options: { lang?: 'ar' | 'en'; action?: 'sign' | 'approve_only'; pages?: number; otp?: boolean } = {},
) {
  const phone = options.lang === 'ar' ? PHONES.saudiA : PHONES.uk;
  const doc = await createDocument(h, {
    workflowType: 'sequential',
    approvers: [
      {
        name: 'سارة المطيري',
        phone,
        action_type: options.action ?? 'sign',
        ...(options.otp && { verification: 'whatsapp_otp' }),
      },
    ],
    file: await longContract(options.pages ?? 6),
  });
  await send(h, doc.id);
  await page.setViewportSize(PHONE.viewport);
  await page.goto(
    `${h.service.api.url}/a/${linkTokenOf(await requestFor(h, phone, doc.id))}?lang=${options.lang ?? 'en'}`,
  );
  return doc;
}

/** Page `n`'s canvas: its pixels and its width on screen. */
const canvasOf = (n: number) =>
  page.evaluate<{ width: number; cssWidth: number }>(
    `(() => { const c = document.querySelector('.pdf-page[data-page="${n}"] > canvas');
      return { width: c.width, cssWidth: c.getBoundingClientRect().width }; })()`,
  );

/** Dark pixels on the signature pad. */
const inkOnPad = () =>
  page.evaluate<number>(`(() => {
    const c = document.getElementById('signature-pad');
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 3; i < d.length; i += 4) if (d[i] > 128) n++;
    return n;
  })()`);

const inView = (selector: string) =>
  page.evaluate<boolean>(`(() => { const r = document.querySelector('${selector}').getBoundingClientRect();
    return r.top >= 0 && r.bottom <= innerHeight && r.height > 0; })()`);

describe('the approval page in a phone’s hands', () => {
  it('zooms with the buttons and with a pinch, drawing the visible page again at the new scale', async () => {
    await open({ pages: 12 });
    await page.locator('.pdf-page[data-page="2"]').scrollIntoViewIfNeeded();
    await waitForPage(page, 2);
    const before = await canvasOf(2);
    expect(before.width).toBe(Math.floor(before.cssWidth) * 3); // devicePixelRatio 3

    await page.click('#zoom-in');
    await page.click('#zoom-in');
    expect(await page.textContent('#zoom-level')).toBe('156%');
    await expect.poll(async () => (await canvasOf(2)).cssWidth).toBeCloseTo(before.cssWidth * 1.56, 0);
    // Drawn again for the new size: finer than before, not the old bitmap stretched.
    await expect
      .poll(async () => (await canvasOf(2)).width, { timeout: 20_000 })
      .toBeGreaterThan(before.width * 1.4);
    await page.click('#zoom-out');
    await page.click('#zoom-out');
    await expect.poll(async () => (await canvasOf(2)).width, { timeout: 20_000 }).toBe(before.width);

    // Two fingers spread from 80 to 200 px apart over the page: 2.5 times.
    const touch = await touchSession(page);
    const box = (await page.locator('.pdf-page[data-page="2"]').boundingBox())!;
    const middle = [206, Math.min(800, Math.max(100, box.y + 200))] as [number, number];
    await touch.pinch(middle, 80, 200);
    expect(await page.textContent('#zoom-level')).toBe('250%');
    const visible = await page.evaluate<number>(
      `Number(document.elementFromPoint(206, ${middle[1]}).closest('.pdf-page').dataset.page)`,
    );
    await expect
      .poll(async () => (await canvasOf(visible)).cssWidth, { timeout: 20_000 })
      .toBeGreaterThan(before.cssWidth * 2.4);
    await expect
      .poll(async () => (await canvasOf(visible)).width, { timeout: 20_000 })
      .toBeGreaterThan(before.width);
    // Zoomed in, the pages scroll sideways, and the bar with the way to the action stays on screen.
    expect(
      await page.evaluate<boolean>(`document.getElementById('pdf-pages').scrollWidth > innerWidth`),
    ).toBe(true);
    expect(await inView('.viewer-bar')).toBe(true);
    await page.click('#to-action');
    await expect.poll(() => inView('#submit-action')).toBe(true);
  });

  it('takes a signature drawn with a finger, with undo and clear, and records it', async () => {
    const doc = await open({ lang: 'ar' });
    const touch = await touchSession(page);
    const pad = page.locator('#signature-pad');
    await waitForPage(page, 1);
    await pad.scrollIntoViewIfNeeded();
    // Where the pad is now (the pages above it may still be taking their shapes), a stroke across it at height y.
    const line = async (y: number): Promise<[number, number][]> => {
      const box = (await pad.boundingBox())!;
      return Array.from({ length: 20 }, (_, i) => [
        box.x + 20 + i * 15,
        box.y + box.height * y + Math.sin(i / 3) * 10,
      ]);
    };
    await touch.stroke(await line(0.3));
    const one = await inkOnPad();
    expect(one).toBeGreaterThan(100);
    await touch.stroke(await line(0.7));
    expect(await inkOnPad()).toBeGreaterThan(one * 1.5);
    // Undo takes the last stroke away (the first is drawn again in one path: its antialiasing may differ a little).
    await page.click('#undo-signature');
    expect(Math.abs((await inkOnPad()) - one)).toBeLessThan(one * 0.05);
    await page.click('#clear-signature');
    expect(await inkOnPad()).toBe(0);
    await page.click('#submit-action');
    await expect.poll(() => page.textContent('#form-error')).toContain('ارسم توقيعك');

    await touch.stroke(await line(0.5));
    await page.click('#submit-action');
    await page.waitForSelector('#done:not([hidden])');
    await eventually(async () => (await statusOf(h, doc.id)).approvers[0]?.status === 'completed');
  });

  it('turned to landscape, draws the pages again at the new width and keeps the bar in reach', async () => {
    await open();
    await waitForPage(page, 1);
    const portrait = await canvasOf(1);
    await page.setViewportSize({ width: PHONE.viewport.height, height: PHONE.viewport.width });
    // The page's column (720 px at most) is wider than the phone held upright.
    await expect
      .poll(async () => (await canvasOf(1)).cssWidth, { timeout: 20_000 })
      .toBeGreaterThan(portrait.cssWidth * 1.5);
    // Drawn again for it (at 686 CSS pixels and devicePixelRatio 3 a page would need 6 M pixels: the 4 M cap).
    await expect
      .poll(async () => (await canvasOf(1)).width, { timeout: 20_000 })
      .toBeGreaterThan(portrait.width);
    await page.locator('.pdf-page[data-page="2"]').scrollIntoViewIfNeeded();
    expect(await inView('.viewer-bar')).toBe(true);
    await page.setViewportSize(PHONE.viewport);
    await expect.poll(async () => (await canvasOf(1)).cssWidth, { timeout: 20_000 }).toBe(portrait.cssWidth);
  });

  it.each(['ar', 'en'] as const)('has no serious or critical accessibility fault (%s)', async (lang) => {
    await open({ lang });
    await waitForPage(page, 1);
    const documentPage = await axeViolations(page);
    await open({ lang, otp: true, action: 'approve_only' });
    await page.waitForSelector('#code-step');
    const codeStep = await axeViolations(page);
    console.log(`axe (${lang}): ${documentPage.passed} and ${codeStep.passed} rules passed`);
    expect(documentPage.passed).toBeGreaterThan(10);
    expect(codeStep.passed).toBeGreaterThan(10);
    expect([...documentPage.violations, ...codeStep.violations]).toEqual([]);
  });
});
