import { copyFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, PHONE } from '../helpers/browser.ts';
import {
  createDocument,
  linkTokenOf,
  PHONES,
  requestFor,
  send,
  startFlowHarness,
  type FlowHarness,
} from '../helpers/approval-flow.ts';
import { arabicContract, longContract } from '../helpers/contract-pdf.ts';
import {
  ARTIFACTS,
  CANVAS_MEMORY_SCRIPT,
  canvasMemory,
  ensureArtifacts,
  transferred,
  waitForPage,
} from '../helpers/phone-page.ts';

/**
 * The approval page on a phone (412 × 915 CSS pixels, devicePixelRatio 3, touch) in Debian's Chromium against the
 * real service: what it downloads, what it holds in memory on a 200-page contract, how long the first page takes
 * on a slow mobile connection, and what it looks like.
 */
const KB = 1024;
const MB = 1024 * 1024;
/** Records, in the page, when the first PDF page is drawn (ms since navigation). */
const FIRST_PAGE_SCRIPT = `new MutationObserver((changes, observer) => {
  if (!document.querySelector('.pdf-page[data-state="drawn"]')) return;
  globalThis.__firstPageAt = performance.now();
  observer.disconnect();
}).observe(document, { subtree: true, attributes: true, attributeFilter: ['data-state'] });`;

let h: FlowHarness;
let chromium: Awaited<ReturnType<typeof launchChromium>>;
beforeAll(async () => {
  [h, chromium] = await Promise.all([startFlowHarness(), launchChromium()]);
  await ensureArtifacts();
});
afterAll(async () => {
  await Promise.all([h?.close(), chromium?.close()]);
});

/** A sent document with one approver, and the link to their page. */
async function pageFor(pdf: Buffer, options: { phone?: string; action?: 'sign' | 'approve_only' } = {}) {
  const phone = options.phone ?? PHONES.uk;
  const doc = await createDocument(h, {
    workflowType: 'sequential',
    approvers: [{ name: 'سارة المطيري', phone, action_type: options.action ?? 'approve_only' }],
    file: pdf,
  });
  await send(h, doc.id);
  return `${h.service.api.url}/a/${linkTokenOf(await requestFor(h, phone, doc.id))}`;
}

/** A phone with an empty cache: everything the page needs comes over the network. */
async function withPhone<T>(run: (page: Page) => Promise<T>): Promise<T> {
  const context = await chromium.newContext(PHONE);
  try {
    const page = await context.newPage();
    page.setDefaultTimeout(60_000);
    await page.addInitScript(FIRST_PAGE_SCRIPT);
    await page.addInitScript(CANVAS_MEMORY_SCRIPT);
    return await run(page);
  } finally {
    await context.close();
  }
}

interface FirstVisit {
  firstPageMs: number;
  assetBytes: number;
  requests: { url: string; bytes: number }[];
  encodings: Map<string, string | undefined>;
}

/** Opens `url` on a fresh phone, optionally on Slow 4G, until the first PDF page is drawn. */
function firstVisit(url: string, slow4g: boolean): Promise<FirstVisit> {
  return withPhone(async (page) => {
    const encodings = new Map<string, string | undefined>();
    page.on('response', (r) => encodings.set(r.url(), r.headers()['content-encoding']));
    if (slow4g) {
      const cdp = await page.context().newCDPSession(page);
      await cdp.send('Network.enable');
      // Chrome DevTools' "Slow 4G": 1.6 Mbit/s down, 750 kbit/s up, 150 ms latency.
      await cdp.send('Network.emulateNetworkConditions', {
        offline: false,
        latency: 150,
        downloadThroughput: (1.6 * 1000 * 1000) / 8,
        uploadThroughput: (750 * 1000) / 8,
      });
    }
    await page.goto(url);
    if (slow4g) {
      // While the PDF comes in, a progress bar says how much of it has.
      // (Polled through DevTools: the page's CSP refuses the eval that waitForFunction would need.)
      const progressing = `(() => { const p = document.getElementById('pdf-progress'); return !!p && p.offsetParent !== null && p.value > 0; })()`;
      await expect
        .poll(() => page.evaluate<boolean>(progressing), { timeout: 60_000, interval: 20 })
        .toBe(true);
    }
    await waitForPage(page, 1, 'drawn', 120_000);
    const firstPageMs = await page.evaluate<number>('globalThis.__firstPageAt');
    await expect.poll(() => page.isVisible('#pdf-loading')).toBe(false);
    // The PDF itself aside: the page, its scripts and styles, pdf.js, its worker and font data.
    const assets = (await transferred(page)).filter((r) => !r.url.includes('/document.pdf'));
    return {
      firstPageMs,
      assetBytes: assets.reduce((sum, r) => sum + r.bytes, 0),
      requests: assets,
      encodings,
    };
  });
}

describe('the approval page on a phone', () => {
  it('shows the page and the first page of the PDF within 800 KB, compressed, and says how long on Slow 4G', async () => {
    const url = await pageFor(await longContract(40));
    const fast = await firstVisit(url, false);
    const slow = await firstVisit(url, true);
    for (const r of fast.requests) console.log(`  ${(r.bytes / KB).toFixed(1).padStart(7)} KB  ${r.url}`);
    console.log(
      `first page drawn: unthrottled ${Math.round(fast.firstPageMs)} ms, ${(fast.assetBytes / KB).toFixed(0)} KB; ` +
        `Slow 4G (1.6 Mbit/s, 150 ms) ${Math.round(slow.firstPageMs)} ms, ${(slow.assetBytes / KB).toFixed(0)} KB`,
    );
    expect(fast.assetBytes).toBeLessThanOrEqual(800 * KB);
    expect(slow.assetBytes).toBeLessThanOrEqual(800 * KB);
    // Every script and stylesheet came compressed with brotli, pdf.js's worker included.
    const code = [...fast.encodings].filter(([u]) => /\/a\/assets\/.*\.(m?js|css)$/.test(u));
    expect(code.map(([u]) => path.basename(u))).toEqual(
      expect.arrayContaining([expect.stringMatching(/^pdf\.worker\.min\.[0-9a-f]{16}\.mjs$/)]),
    );
    for (const [u, encoding] of code) expect(encoding, u).toBe('br');
  }, 300_000);

  it('scrolls a 200-page contract from the first page to the last at devicePixelRatio 3 under 100 MB of canvas', async () => {
    const url = await pageFor(await longContract(200));
    await withPhone(async (page) => {
      await page.goto(url);
      await waitForPage(page, 1);
      const pages = page.locator('.pdf-page');
      expect(await pages.count()).toBe(200);
      let drawnOnTheWay = 0;
      for (let n = 1; n <= 200; n += 3) {
        await page.locator(`.pdf-page[data-page="${n}"]`).scrollIntoViewIfNeeded();
        await waitForPage(page, n);
        drawnOnTheWay++;
      }
      await page.locator('.pdf-page[data-page="200"]').scrollIntoViewIfNeeded();
      await waitForPage(page, 200);
      const { now, peak } = await canvasMemory(page);
      const held = await page.locator('.pdf-page > canvas').count();
      console.log(
        `200 pages at devicePixelRatio 3: canvas memory peak ${(peak / MB).toFixed(1)} MB, ` +
          `${(now / MB).toFixed(1)} MB at the last page, ${held} pages held (one page is ` +
          `${((1134 * 1603 * 4) / MB).toFixed(1)} MB)`,
      );
      expect(drawnOnTheWay).toBe(67);
      expect(peak).toBeLessThanOrEqual(100 * MB);
      // The first pages were released on the way: their canvases are gone.
      expect(await page.locator('.pdf-page[data-page="1"]').getAttribute('data-state')).toBe('empty');
      expect(held).toBeLessThan(15);
    });
  }, 600_000);

  it('shows a long Arabic contract at phone width (screenshot for docs/)', async () => {
    const url = await pageFor(await arabicContract(30), { phone: PHONES.saudiA, action: 'sign' });
    await withPhone(async (page) => {
      await page.goto(url);
      expect(await page.getAttribute('html', 'dir')).toBe('rtl');
      await waitForPage(page, 1);
      // The top of the page: the title, the sender, the first page of the contract under it.
      const shot = path.join(ARTIFACTS, 'approval-page-phone-ar.png');
      await page.screenshot({ path: shot });
      await page.locator('.pdf-page[data-page="2"]').scrollIntoViewIfNeeded();
      await waitForPage(page, 2);
      await page.screenshot({ path: path.join(ARTIFACTS, 'approval-page-phone-ar-page2.png') });
      expect(await page.locator('.pdf-page[data-page="1"] .textLayer').textContent()).toContain('عقد توريد');
      if (process.env.WATHIQ_DOCS_SCREENSHOTS === '1')
        await copyFile(shot, path.resolve('docs/approval-page-phone-ar.png'));
      await writeFile(path.join(ARTIFACTS, 'approval-page-phone-ar.txt'), url);
    });
  }, 120_000);
});
