import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import type { CDPSession, Page } from 'playwright-core';
import { readPgm, type Gray } from './ink-compare.ts';

/** What the approval page's phone tests share: canvas memory, network bytes, touches and reference drawings. */

const require = createRequire(import.meta.url);

/**
 * Run in the page before its own scripts: keeps a weak reference to every canvas made (HTML, createElement,
 * OffscreenCanvas), and on every animation frame sums their pixel memory (width × height × 4 bytes; a released
 * canvas is 0 × 0) and keeps the peak.
 */
export const CANVAS_MEMORY_SCRIPT = `(() => {
  const made = new Set();
  const track = (c) => { made.add(new WeakRef(c)); return c; };
  const create = Document.prototype.createElement;
  Document.prototype.createElement = function (name, ...rest) {
    const el = create.call(this, name, ...rest);
    return String(name).toLowerCase() === 'canvas' ? track(el) : el;
  };
  if (typeof OffscreenCanvas === 'function') {
    const Offscreen = OffscreenCanvas;
    globalThis.OffscreenCanvas = function (w, h) { return track(new Offscreen(w, h)); };
    globalThis.OffscreenCanvas.prototype = Offscreen.prototype;
  }
  let peak = 0;
  const measure = () => {
    const all = new Set(document.querySelectorAll('canvas'));
    for (const ref of made) { const c = ref.deref(); if (c) all.add(c); else made.delete(ref); }
    let bytes = 0;
    for (const c of all) bytes += c.width * c.height * 4;
    peak = Math.max(peak, bytes);
    return bytes;
  };
  const frame = () => { measure(); requestAnimationFrame(frame); };
  requestAnimationFrame(frame);
  globalThis.__canvasMemory = { measure, peak: () => (measure(), peak) };
})();`;

export const canvasMemory = (page: Page) =>
  page.evaluate(() => {
    const m = (globalThis as unknown as { __canvasMemory: { measure(): number; peak(): number } })
      .__canvasMemory;
    return { now: m.measure(), peak: m.peak() };
  });

const ENTRIES = `JSON.stringify(performance.getEntriesByType('navigation').concat(performance.getEntriesByType('resource'))
  .map((e) => ({ url: e.name, bytes: e.transferSize })))`;

/**
 * Bytes on the wire (headers and encoded body) of every request the page and its workers made so far, by URL, as
 * the browser itself counts them (Resource Timing's transferSize, 0 for what came from its cache). Read in the
 * page and in each worker, since pdf.js's worker fetches its font data itself.
 */
export async function transferred(page: Page): Promise<{ url: string; bytes: number }[]> {
  const lists: string[] = await Promise.all([
    page.evaluate<string>(ENTRIES),
    ...page.workers().map((worker) => worker.evaluate<string>(ENTRIES)),
  ]);
  return lists.flatMap((json) => JSON.parse(json) as { url: string; bytes: number }[]);
}

/** The state of page `n` of the viewer (empty, drawing, drawn, redrawing), once it is `state`. */
export const waitForPage = (page: Page, n: number, state = 'drawn', timeout = 30_000) =>
  page.waitForSelector(`.pdf-page[data-page="${n}"][data-state="${state}"]`, { state: 'attached', timeout });

/** The pixels of page `n`'s canvas as drawn, in grey. */
export async function drawnPage(page: Page, n: number): Promise<Gray> {
  // In the page (no DOM types here): the canvas's pixels as grey bytes, base64 for the trip back.
  const { width, height, base64 } = await page.evaluate<{
    width: number;
    height: number;
    base64: string;
  }>(`(() => {
    const canvas = document.querySelector('.pdf-page[data-page="${n}"] > canvas');
    const { data } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
    const gray = new Uint8Array(canvas.width * canvas.height);
    for (let i = 0; i < gray.length; i++)
      gray[i] = Math.round(0.299 * data[i * 4] + 0.587 * data[i * 4 + 1] + 0.114 * data[i * 4 + 2]);
    let text = '';
    for (let i = 0; i < gray.length; i += 0x8000) text += String.fromCharCode(...gray.subarray(i, i + 0x8000));
    return { width: canvas.width, height: canvas.height, base64: btoa(text) };
  })()`);
  return { width, height, pixels: new Uint8Array(Buffer.from(base64, 'base64')) };
}

let fontConfig: Promise<string> | undefined;
/**
 * A fontconfig that offers poppler only pdf.js's standard font data, under the standard 14 names: the reference
 * drawing then uses the same fonts as the page, and any difference is where glyphs are put.
 */
function pdfjsFontConfig(): Promise<string> {
  return (fontConfig ??= (async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'wathiq-fonts-'));
    const fonts = path.dirname(require.resolve('pdfjs-dist/standard_fonts/LICENSE_FOXIT'));
    const alias = (family: string, font: string) =>
      `<alias binding="same"><family>${family}</family><prefer><family>${font}</family></prefer></alias>`;
    await writeFile(
      path.join(dir, 'fonts.conf'),
      `<?xml version="1.0"?><!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd"><fontconfig>
      <dir>${fonts}</dir><cachedir>${path.join(dir, 'cache')}</cachedir>
      ${alias('Helvetica', 'Liberation Sans')}${alias('Arial', 'Liberation Sans')}
      ${alias('Times', 'Chrom Serif OTF')}${alias('Courier', 'Chrom Fixed OTF')}
      </fontconfig>`,
    );
    return path.join(dir, 'fonts.conf');
  })());
}

/** Poppler draws this many times finer than the page, and the drawing is averaged down (see referenceDrawing). */
const SUPERSAMPLE = 4;

/**
 * Page `n` of `pdf` drawn by poppler (pdftoppm) `width` pixels wide (its height to scale, within a pixel of
 * `height`), in grey. Poppler puts large glyphs on whole pixels of its own drawing, which would be up to a pixel
 * off at the page's size; drawn four times finer and averaged down, it is within a quarter of one.
 */
export async function referenceDrawing(pdf: Buffer, n: number, width: number, height: number): Promise<Gray> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'wathiq-reference-'));
  await writeFile(path.join(dir, 'in.pdf'), pdf);
  // pdftoppm's -scale-to-x names the unrotated width: the resolution is set from the page's turned size instead.
  const info = execFileSync('pdfinfo', ['-f', String(n), '-l', String(n), path.join(dir, 'in.pdf')], {
    encoding: 'utf8',
  });
  const size = new RegExp(`Page\\s+${n} size:\\s+([\\d.]+) x ([\\d.]+)`).exec(info);
  const rotation = Number(new RegExp(`Page\\s+${n} rot:\\s+(\\d+)`).exec(info)?.[1] ?? 0);
  if (!size) throw new Error(`pdfinfo gave no size for page ${n}`);
  const shownWidth = Number(rotation % 180 === 0 ? size[1] : size[2]);
  const dpi = (72 * width * SUPERSAMPLE) / shownWidth;
  execFileSync(
    'pdftoppm',
    [
      '-gray',
      '-f',
      String(n),
      '-l',
      String(n),
      '-r',
      dpi.toFixed(4),
      path.join(dir, 'in.pdf'),
      path.join(dir, 'out'),
    ],
    { env: { ...process.env, FONTCONFIG_FILE: await pdfjsFontConfig() }, stdio: 'pipe' },
  );
  const [file] = (await readdir(dir)).filter((f) => f.startsWith('out'));
  const fine = readPgm(await readFile(path.join(dir, file!)));
  await rm(dir, { recursive: true, force: true });
  const h = Math.min(height + 1, Math.floor(fine.height / SUPERSAMPLE));
  const pixels = new Uint8Array(width * h);
  for (let y = 0; y < h; y++)
    for (let x = 0; x < width; x++) {
      let sum = 0;
      for (let dy = 0; dy < SUPERSAMPLE; dy++)
        for (let dx = 0; dx < SUPERSAMPLE; dx++)
          sum += fine.pixels[(y * SUPERSAMPLE + dy) * fine.width + x * SUPERSAMPLE + dx] ?? 255;
      pixels[y * width + x] = Math.round(sum / SUPERSAMPLE ** 2);
    }
  return { width, height: h, pixels };
}

/** Touches through Chromium's input pipeline (touch events, and the pointer events phones derive from them). */
export async function touchSession(page: Page): Promise<{
  stroke(points: [number, number][]): Promise<void>;
  pinch(center: [number, number], from: number, to: number): Promise<void>;
  cdp: CDPSession;
}> {
  const cdp = await page.context().newCDPSession(page);
  type TouchType = 'touchStart' | 'touchMove' | 'touchEnd' | 'touchCancel';
  const touch = (type: TouchType, touchPoints: { x: number; y: number; id: number }[]) =>
    cdp.send('Input.dispatchTouchEvent', { type, touchPoints });
  return {
    cdp,
    async stroke(points) {
      const [first, ...rest] = points;
      await touch('touchStart', [{ x: first![0], y: first![1], id: 1 }]);
      for (const [x, y] of rest) await touch('touchMove', [{ x, y, id: 1 }]);
      await touch('touchEnd', []);
    },
    async pinch([cx, cy], from, to) {
      const at = (d: number) => [
        { x: cx - d / 2, y: cy, id: 1 },
        { x: cx + d / 2, y: cy, id: 2 },
      ];
      await touch('touchStart', at(from));
      for (let i = 1; i <= 8; i++) await touch('touchMove', at(from + ((to - from) * i) / 8));
      await touch('touchEnd', []);
    },
  };
}

/** axe-core's serious and critical violations on the page as it is now, and how many of its rules passed. */
export async function axeViolations(
  page: Page,
): Promise<{ passed: number; violations: { id: string; impact: string; nodes: string[] }[] }> {
  // Evaluated through the DevTools protocol, which the page's CSP (script-src 'self') does not govern.
  await page.evaluate(await readFile(require.resolve('axe-core/axe.min.js'), 'utf8'));
  const json =
    await page.evaluate<string>(`axe.run({ resultTypes: ['violations', 'passes'] }).then((r) => JSON.stringify({
    passed: r.passes.length,
    violations: r.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(' ')) })),
  }))`);
  return JSON.parse(json) as {
    passed: number;
    violations: { id: string; impact: string; nodes: string[] }[];
  };
}

export const ARTIFACTS = path.resolve('test-artifacts');
export const ensureArtifacts = () => mkdir(ARTIFACTS, { recursive: true });
