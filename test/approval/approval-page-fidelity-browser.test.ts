import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, PHONE } from '../helpers/browser.ts';
import {
  createDocument,
  linkTokenOf,
  PHONES,
  requestFor,
  send,
  startFlowHarness,
} from '../helpers/approval-flow.ts';
import { arabicContract, embeddedFontsPdf, standardFontsPdf } from '../helpers/contract-pdf.ts';
import { compareInk, grayPng, type BandDifference } from '../helpers/ink-compare.ts';
import {
  ARTIFACTS,
  drawnPage,
  ensureArtifacts,
  referenceDrawing,
  waitForPage,
} from '../helpers/phone-page.ts';
import type { FlowHarness } from '../helpers/approval-flow.ts';

/**
 * The approval page draws a PDF's text where the PDF puts it: each page as drawn in Chromium on a phone (412 px,
 * devicePixelRatio 3) is compared with poppler's drawing of the same page at the same size with the same fonts
 * (ink-compare.ts). Glyphs more than a pixel from their place fail the test; the last case shows that the
 * comparison catches the phone's own fonts standing in for the standard ones.
 */
const TOLERANCE_PX = 1;

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

async function openDocument(pdf: Buffer): Promise<void> {
  const doc = await createDocument(h, {
    workflowType: 'sequential',
    approvers: [{ name: 'Reader', phone: PHONES.uk, action_type: 'approve_only' }],
    file: pdf,
  });
  await send(h, doc.id);
  const token = linkTokenOf(await requestFor(h, PHONES.uk, doc.id));
  await page.goto(`${h.service.api.url}/a/${token}?lang=en`);
}

/** How far the page's drawing of page `n` is from poppler's, band by band. */
async function differences(pdf: Buffer, n: number): Promise<BandDifference[]> {
  await page.locator(`.pdf-page[data-page="${n}"]`).scrollIntoViewIfNeeded();
  await waitForPage(page, n);
  const drawn = await drawnPage(page, n);
  const reference = await referenceDrawing(pdf, n, drawn.width, drawn.height);
  const bands = compareInk(reference, drawn);
  if (bands.length === 0 || bands.some((b) => b.shift > TOLERANCE_PX)) {
    await ensureArtifacts();
    const name = `fidelity-${expect.getState().currentTestName?.replace(/\W+/g, '-').slice(0, 60)}-p${n}`;
    await writeFile(path.join(ARTIFACTS, `${name}-page.png`), grayPng(drawn));
    await writeFile(path.join(ARTIFACTS, `${name}-poppler.png`), grayPng(reference));
  }
  return bands;
}

const worst = (bands: BandDifference[]) => Math.max(...bands.map((b) => b.shift));

const rotatedMixed = () => readFile(path.resolve('test/fixtures/pdf/rotated-mixed.pdf'));

describe('the approval page draws text where the PDF puts it', () => {
  it.each([
    { what: 'standard 14 fonts, not embedded', pdf: standardFontsPdf, pages: [1] },
    { what: 'embedded fonts', pdf: embeddedFontsPdf, pages: [1] },
    { what: 'Arabic text (shaped, embedded Noto Naskh Arabic)', pdf: () => arabicContract(2), pages: [1, 2] },
    { what: 'rotated pages of mixed sizes', pdf: rotatedMixed, pages: [1, 2, 3, 4, 5] },
  ])('$what: every glyph within a pixel of poppler’s drawing', async ({ what, pdf: make, pages }) => {
    const pdf = await make();
    await openDocument(pdf);
    for (const n of pages) {
      const bands = await differences(pdf, n);
      console.log(`${what}, page ${n}: ${bands.length} bands, largest shift ${worst(bands).toFixed(2)} px`);
      expect(bands.length, `page ${n} has text`).toBeGreaterThan(0);
      for (const band of bands) {
        expect(band.shift, `page ${n}, ${band.axis} ${band.from}-${band.to}`).toBeLessThanOrEqual(
          TOLERANCE_PX,
        );
        expect(band.inkRatio, `page ${n}, ${band.axis} ${band.from}-${band.to}`).toBeGreaterThan(0.75);
        expect(band.inkRatio, `page ${n}, ${band.axis} ${band.from}-${band.to}`).toBeLessThan(1.33);
      }
    }
  });

  it('fails when the phone’s fonts stand in for the standard ones (pdf.js told to use system fonts)', async () => {
    // The viewer as it was before pdf.js was told to use its own font data: system fonts, no font data URL.
    let rewritten = false;
    await page.route('**/a/assets/pdf-viewer.*.js', async (route) => {
      const original = await (await route.fetch()).text();
      const body = original
        .replace('useSystemFonts: false,', 'useSystemFonts: true,')
        .replace('standardFontDataUrl: assets.standardFonts,', '');
      rewritten = body !== original && !body.includes('standardFontDataUrl');
      await route.fulfill({ body, contentType: 'text/javascript' });
    });
    try {
      const pdf = await rotatedMixed();
      await openDocument(pdf);
      const bands = await differences(pdf, 1);
      expect(rewritten).toBe(true);
      console.log(`system fonts, page 1: largest shift ${worst(bands).toFixed(2)} px`);
      expect(worst(bands)).toBeGreaterThan(TOLERANCE_PX);
    } finally {
      await page.unroute('**/a/assets/pdf-viewer.*.js');
    }
  });

  it('lays a text layer over each drawn page: selectable, in the accessibility tree', async () => {
    await openDocument(await standardFontsPdf());
    await waitForPage(page, 1);
    const layer = page.locator('.pdf-page[data-page="1"] .textLayer');
    await expect.poll(() => layer.textContent()).toContain('The quick brown fox jumps over 1,234 lazy dogs.');
    // A finger or a mouse on the words lands on the text layer, not the canvas: the text can be selected.
    const word = layer.locator('span', { hasText: 'Times-Roman' }).first();
    const box = (await word.boundingBox())!;
    const [x, y] = [box.x + box.width / 2, box.y + box.height / 2];
    expect(await page.evaluate(`document.elementFromPoint(${x}, ${y})?.closest('.textLayer') !== null`)).toBe(
      true,
    );
    await word.dblclick();
    const selected = (await page.evaluate<string>(`getSelection()?.toString() ?? ''`)).trim();
    expect(selected).toMatch(/^[A-Za-z]+$/);
    expect('Times-Roman: The quick brown fox jumps over 1,234 lazy dogs.').toContain(selected);
    // What a screen reader reads: the page's text, not an image.
    const snapshot = await page.locator('.pdf-page[data-page="1"]').ariaSnapshot();
    expect(snapshot).toContain('The quick brown fox');
  });
});
