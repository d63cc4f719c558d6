import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createDocument,
  linkTokenOf,
  PHONES,
  requestFor,
  send,
  startFlowHarness,
  type FlowHarness,
} from '../helpers/approval-flow.ts';

/**
 * The approval page's assets as a phone's browser fetches them from the real service: fingerprinted names,
 * compressed as Accept-Encoding allows, cached for a year; nothing else under /a/assets.
 */
const require = createRequire(import.meta.url);
let h: FlowHarness;
let html: string;
let base: string;

beforeAll(async () => {
  h = await startFlowHarness();
  const doc = await createDocument(h, {
    workflowType: 'sequential',
    approvers: [{ name: 'Signer', phone: PHONES.uk, action_type: 'sign' }],
  });
  const sent = await send(h, doc.id);
  expect(sent.status).toBe(200);
  base = h.service.api.url;
  html = await (await fetch(`${base}/a/${linkTokenOf(await requestFor(h, PHONES.uk, doc.id))}`)).text();
});
afterAll(async () => {
  await h?.close();
});

/** Every asset URL the page names: stylesheets, preloads, its script, and those its data gives its scripts. */
function assetUrls(): string[] {
  const attrs = [...html.matchAll(/(?:href|src)="(\/a\/assets\/[^"]+)"/g)].map((m) => m[1]!);
  const data = JSON.parse(
    /<script type="application\/json" id="approval-data">(.*?)<\/script>/s.exec(html)![1]!,
  ) as {
    assets: Record<string, string>;
  };
  return [...new Set([...attrs, ...Object.values(data.assets)])];
}

const get = (url: string, acceptEncoding?: string, method = 'GET') =>
  fetch(`${base}${url}`, {
    method,
    headers: acceptEncoding === undefined ? {} : { 'accept-encoding': acceptEncoding },
  });

describe('the approval page’s assets', () => {
  it('are named by their content and served compressed as the browser asks, cached for a year', async () => {
    const urls = assetUrls();
    const files = urls.filter((u) => !u.endsWith('/'));
    expect(files.map((u) => path.basename(u)).sort()).toEqual(
      [
        'approval.css',
        'approval.js',
        'page.css',
        'pdf-viewer.js',
        'pdf.min.mjs',
        'pdf.worker.min.mjs',
        'signature-pad.js',
      ].map((name): unknown =>
        expect.stringMatching(new RegExp(`^${name.replace(/\.(m?js|css)$/, '')}\\.[0-9a-f]{16}\\.`)),
      ),
    );
    // The font data and cMaps folders, by one file each.
    const folders = urls.filter((u) => u.endsWith('/'));
    expect(folders).toHaveLength(2);
    files.push(`${folders.find((f) => f.includes('standard_fonts'))!}LiberationSans-Regular.ttf`);
    files.push(`${folders.find((f) => f.includes('cmaps'))!}UniJIS-UCS2-H.bcmap`);

    for (const url of files) {
      const served = new Map<string, Buffer>();
      for (const [accept, expected] of [
        ['gzip, deflate, br, zstd', 'br'],
        ['gzip, deflate', 'gzip'],
        ['identity', null],
        ['br;q=0, gzip;q=0', null],
      ] as const) {
        const res = await get(url, accept);
        expect(res.status, url).toBe(200);
        expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
        expect(res.headers.get('vary')).toBe('Accept-Encoding');
        expect(res.headers.get('x-content-type-options')).toBe('nosniff');
        // fetch() decodes br and gzip itself: every body here is the file as it is.
        const body = Buffer.from(await res.arrayBuffer());
        const encoding = res.headers.get('content-encoding');
        // A cMap too small to gain from brotli goes as it is: either way, the same bytes arrive.
        if (!url.endsWith('.bcmap')) expect(encoding, `${url} with ${accept}`).toBe(expected);
        served.set(String(accept), body);
        expect(res.headers.get('content-type'), url).toMatch(/javascript|css|octet-stream/);
      }
      const plain = served.get('identity')!;
      expect(plain.length).toBeGreaterThan(0);
      for (const body of served.values()) expect(body.equals(plain), url).toBe(true);
      // A file's name is its content's: the SHA-256 of what arrives begins with the fingerprint in the URL.
      const fingerprint = /\.([0-9a-f]{16})\.[a-z]+$/.exec(url)?.[1];
      if (fingerprint)
        expect(createHash('sha256').update(plain).digest('hex').startsWith(fingerprint), url).toBe(true);
    }
  });

  it('decode to the very files they are made from', async () => {
    const worker = assetUrls().find((u) => u.includes('pdf.worker'))!;
    const original = await readFile(require.resolve('pdfjs-dist/legacy/build/pdf.worker.min.mjs'));
    const viaFetch = (accept: string) =>
      fetch(`${base}${worker}`, { headers: { 'accept-encoding': accept } }).then(async (r) => ({
        encoding: r.headers.get('content-encoding'),
        length: Number(r.headers.get('content-length')),
        body: Buffer.from(await r.arrayBuffer()),
      }));
    // undici's fetch decodes br and gzip, so these bodies are the originals; the lengths are what was sent.
    const br = await viaFetch('br');
    const gzip = await viaFetch('gzip');
    expect(br.body.equals(original)).toBe(true);
    expect(gzip.body.equals(original)).toBe(true);
    expect(br.encoding).toBe('br');
    expect(br.length).toBeLessThan(original.length * 0.3);
    expect(gzip.length).toBeLessThan(original.length * 0.35);
  });

  it('answers HEAD with the headers alone', async () => {
    const css = assetUrls().find((u) => u.includes('approval.'))!;
    const res = await get(css, 'br', 'HEAD');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-encoding')).toBe('br');
    expect((await res.arrayBuffer()).byteLength).toBe(0);
  });

  it.each([
    'approval.js',
    'pdf.worker.min.mjs',
    'approval.0000000000000000.js',
    'standard_fonts/LiberationSans-Regular.ttf',
    '__proto__',
    'constructor',
    '..%2F..%2Fpackage.json',
  ])('/a/assets/%s names no asset: 404', async (name) => {
    const res = await get(`/a/assets/${name}`, 'br');
    expect(res.status).toBe(404);
    expect(((await res.json()) as { success: boolean }).success).toBe(false);
  });

  it('a folder file that is not the folder’s, or under another fingerprint, is a 404', async () => {
    const fonts = assetUrls().find((u) => u.includes('standard_fonts'))!;
    expect((await get(`${fonts}LICENSE_FOXIT`)).status).toBe(404);
    expect(
      (await get(`${fonts.replace(/\.[0-9a-f]{16}\//, '.0000000000000000/')}FoxitSerif.pfb`)).status,
    ).toBe(404);
    expect((await get(`${fonts}FoxitSerif.pfb`)).status).toBe(200);
  });
});
