import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomToken } from '../../src/auth/tokens.ts';
import { verificationsStore } from '../../src/features/approval/verifications-store.ts';
import { qrMatrix } from '../../src/pdf/compose/qr.ts';
import { formatHijri, formatRiyadh } from '../../src/pdf/compose/wording.ts';
import { readObject } from '../../src/storage/storage.ts';
import { createDocument, statusOf } from '../helpers/approval-flow.ts';
import { launchBrowser } from '../helpers/browser.ts';
import {
  ARTIFACTS,
  type CreatedDocument,
  createBilingualDocument,
  download,
  type DownloadBody,
  driveToApproval,
  fetchPublic,
  type FinalPdfHarness,
  PUBLIC_BASE_URL,
  sixApprovers,
  startFinalPdfHarness,
} from '../helpers/final-pdf.ts';
import { pageCount, pageText, renderPage } from '../helpers/pdf-tools.ts';

/**
 * The public verification page of a really finalized document: the URL and QR code on its certificate, the page in
 * both languages, the check of a dropped PDF (HTTP and in Debian's Chromium), and what it refuses to tell.
 */
const RATE_LIMIT = 40;
let h: FinalPdfHarness;
let doc: CreatedDocument;
let signed: Buffer;
let original: Buffer;
let verifyUrl: string;
let token: string;
let actedAt: Date[];
const approvers = [sixApprovers()[0]!, sixApprovers()[4]!]; // a drawn signature (page), an approval (button)

beforeAll(async () => {
  h = await startFinalPdfHarness({
    // TRUST_PROXY: the rate-limit test speaks for an address of its own with X-Forwarded-For.
    env: { TRUST_PROXY: '1', VERIFY_RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT), VERIFY_CHECK_MAX_MB: '2' },
  });
  await mkdir(ARTIFACTS, { recursive: true });
  doc = await createBilingualDocument(h, 'sequential', approvers);
  await driveToApproval(h, doc, approvers, [0, 1]);
  const body = (await (await download(h, doc.id)).json()) as DownloadBody;
  signed = Buffer.from(await (await fetchPublic(h, body.data.download_url)).arrayBuffer());
  const row = await h.service.database.db('documents').where({ id: doc.id }).first<{ file_key: string }>();
  original = (await readObject(h.service.deps.storage, row.file_key))!;
  const got = (await (await h.service.request(`/documents/${doc.id}`, { account: h.account })).json()) as {
    data: { verification_url?: string };
  };
  verifyUrl = got.data.verification_url!;
  token = verifyUrl.split('/').pop()!;
  actedAt = (await statusOf(h, doc.id)).approvers.map((a) => new Date(a.acted_at!));
}, 240_000);
afterAll(async () => {
  await h?.close();
  if (h) await rm(h.dataDir, { recursive: true, force: true });
});

const page = (path: string, init: RequestInit = {}) => fetch(`${h.service.api.url}${path}`, init);
const check = (t: string, body: Uint8Array) =>
  page(`/v/${t}/check`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/octet-stream' },
    body,
  });
const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
/** The signed file with one byte of its certificate's text changed. */
const modified = () => {
  const copy = Buffer.from(signed);
  const i = copy.length - 2000;
  copy[i] = copy[i]! ^ 0x01;
  return copy;
};

describe('the document JSON and the certificate', () => {
  it('give an approved document its verification URL: 128 random bits, base64url, the same on a retry', async () => {
    expect(verifyUrl).toMatch(new RegExp(`^${PUBLIC_BASE_URL}/v/[A-Za-z0-9_-]{22}$`));
    // A retried finalization reserves again: it finds the same token.
    expect(await verificationsStore(h.service.database.db).reserve(doc.id, h.service.deps.secrets)).toBe(
      token,
    );
    // A draft has none.
    const draft = await createDocument(h, {
      workflowType: 'sequential',
      approvers: [{ name: 'Ali', phone: '966501111111', action_type: 'sign' }],
    });
    const body = (await (
      await h.service.request(`/documents/${draft.id}`, { account: h.account })
    ).json()) as {
      data: Record<string, unknown>;
    };
    expect(body.data).not.toHaveProperty('verification_url');
  });

  it('prints the URL and a QR code that decodes to it; the drawn modules are the QR code of the URL', async () => {
    const file = path.join(h.dataDir, 'signed.pdf');
    await writeFile(file, signed);
    const pages = pageCount(file);
    const first = Array.from({ length: pages }, (_, i) => i + 1).find((p) =>
      pageText(file, p).includes('Audit certificate'),
    )!;
    expect(pageText(file, first)).toContain(verifyUrl);

    // Rendered as a printer would and read back by a QR decoder (zbar).
    for (const dpi of [80, 150]) {
      const prefix = path.join(ARTIFACTS, `verification-certificate-${dpi}`);
      renderPage(file, first, prefix, dpi);
      const r = spawnSync('zbarimg', ['-q', '--raw', `${prefix}.png`], { encoding: 'utf8' });
      expect(r.stdout.trim(), r.stderr).toBe(verifyUrl);
    }

    // And the modules themselves, read from the page's content: one rectangle per horizontal run of dark modules.
    const qdf = path.join(h.dataDir, 'signed-qdf.pdf');
    execFileSync('qpdf', ['--qdf', '--object-streams=disable', file, qdf]);
    const text = (await readFile(qdf)).toString('latin1');
    const block = /\/WathiqQR BMC\n([\s\S]*?)\nEMC/.exec(text)?.[1];
    expect(block).toBeDefined();
    const rects = [...block!.matchAll(/(-?[\d.]+) (-?[\d.]+) ([\d.]+) ([\d.]+) re/g)].map((m) =>
      m.slice(1, 5).map(Number),
    );
    const m = qrMatrix(verifyUrl);
    const module = rects[0]![3]!;
    const left = Math.min(...rects.map((r) => r[0]!));
    const top = Math.max(...rects.map((r) => r[1]! + r[3]!));
    const drawn = Array.from({ length: m.size }, () => Array<boolean>(m.size).fill(false));
    for (const [x, y, w] of rects) {
      const row = Math.round((top - y! - module) / module);
      const col = Math.round((x! - left) / module);
      for (let c = col; c < col + Math.round(w! / module); c++) drawn[row]![c] = true;
    }
    const expected = Array.from({ length: m.size }, (_, r) =>
      Array.from({ length: m.size }, (_, c) => m.dark(r, c)),
    );
    expect(drawn).toEqual(expected);
  });
});

describe('GET /v/{token}', () => {
  it('shows the certificate’s facts in Arabic, right to left, by default, with public-page headers', async () => {
    const res = await page(`/v/${token}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    const html = await res.text();
    expect(html).toContain('<html lang="ar" dir="rtl">');
    expect(html).toContain('التحقق من المستند');
    expect(html).toContain(doc.reference);
    expect(html).toContain('عقد توريد أجهزة الحاسب');
    expect(html).toContain('Computer equipment supply contract');
    expect(html).toContain('سارة عبدالله المطيري');
    expect(html).toContain('وقّع (توقيع مرسوم)'); // what Sara did
    expect(html).toContain('وافق'); // Lina approved
    expect(html).toContain(formatRiyadh(actedAt[0]!));
    expect(html).toContain(formatHijri(actedAt[0]!).ar);
    expect(html).toContain('+966 •••••4567'); // masked as on the certificate
    // Nothing the certificate does not print, and not the full numbers.
    expect(html).not.toContain('966501234567');
    expect(html).not.toContain('447911123456');
    expect(html).not.toContain('203.0.113');
    expect(html).toContain(sha256(signed));
  });

  it('in English with ?lang=en', async () => {
    const html = await (await page(`/v/${token}?lang=en`)).text();
    expect(html).toContain('<html lang="en" dir="ltr">');
    expect(html).toContain('Document verification');
    expect(html).toContain('Sarah Al-Mutairi');
    expect(html).toContain('Lina Al-Shehri');
    expect(html).toContain('Signed (drawn signature)');
    expect(html).toContain('Approved');
    expect(html).toContain('WhatsApp button');
    expect(html).toContain(formatHijri(actedAt[1]!).en);
    expect(html).toContain('+44 ••••••3456');
    // The signature the document recorded at finalization: its level and the signing certificate.
    expect(html).toMatch(/<span id="signature-level"\s*>PAdES, level B-B<\/span/);
    expect(html).toMatch(/<bdi dir="ltr" id="signing-certificate">[^<]*Wathiq Test Document Signing/);
  });

  it('answers one 404 page for a malformed token, an unknown one and a document that is not signed', async () => {
    const draft = await createDocument(h, {
      workflowType: 'sequential',
      approvers: [{ name: 'Ali', phone: '966501111112', action_type: 'sign' }],
    });
    const draftToken = await verificationsStore(h.service.database.db).reserve(
      draft.id,
      h.service.deps.secrets,
    );
    const bodies: string[] = [];
    for (const t of [
      'abc',
      randomToken(16),
      `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`,
      draftToken,
    ]) {
      const res = await page(`/v/${t}`);
      expect(res.status, t).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      bodies.push(await res.text());
      expect((await check(t, signed)).status).toBe(404);
    }
    expect(new Set(bodies).size).toBe(1);
    expect(bodies[0]).toContain('لا يوجد مستند موقّع على هذا العنوان');
    expect(bodies[0]).not.toContain(doc.reference);
  });
});

describe('POST /v/{token}/check (when the browser cannot hash)', () => {
  it('tells the signed file, the original upload and anything else apart', async () => {
    const answer = async (b: Uint8Array) => {
      const res = await check(token, b);
      expect(res.status).toBe(200);
      return ((await res.json()) as { data: { result: string; sha256: string } }).data;
    };
    expect(await answer(signed)).toEqual({ result: 'signed', sha256: sha256(signed) });
    expect(await answer(original)).toEqual({ result: 'original', sha256: sha256(original) });
    expect((await answer(modified())).result).toBe('different');
  });

  it('refuses a file over VERIFY_CHECK_MAX_MB with 413', async () => {
    const res = await check(token, Buffer.alloc(2 * 1024 * 1024 + 1));
    expect(res.status).toBe(413);
  });
});

describe('the rate limit', () => {
  it('answers 429 with Retry-After past VERIFY_RATE_LIMIT_PER_MINUTE requests from one address', async () => {
    // Fixed calendar minutes: 2 × limit + 1 requests exceed it even when a minute ends in between.
    const headers = { 'X-Forwarded-For': '198.51.100.23' };
    let limited: Response | undefined;
    for (let i = 0; i <= 2 * RATE_LIMIT && !limited; i++) {
      const res = await page(`/v/${token}?lang=en`, { headers });
      if (res.status === 429) limited = res;
      else await res.arrayBuffer();
    }
    expect(limited?.status).toBe(429);
    expect(Number(limited!.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await limited!.text()).toContain('Too many requests');
    // Another address is not affected.
    expect((await page(`/v/${token}`)).status).toBe(200);
  });
});

describe('the page in a browser', () => {
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  let tab: Page;
  let dir: string;
  beforeAll(async () => {
    browser = await launchBrowser();
    tab = await browser.context.newPage();
    tab.setDefaultTimeout(15_000);
    dir = path.join(h.dataDir, 'browser');
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, `${doc.reference}.pdf`), signed);
    await writeFile(path.join(dir, 'modified.pdf'), modified());
    await writeFile(path.join(dir, 'original.pdf'), original);
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('says a chosen or dropped PDF is the signed file, and that a modified copy differs (hashed in the page)', async () => {
    const errors: string[] = [];
    tab.on('pageerror', (e) => errors.push(e.message));
    const posts: string[] = [];
    tab.on('request', (r) => {
      if (r.method() === 'POST') posts.push(r.url());
    });
    await tab.goto(`${h.service.api.url}/v/${token}?lang=en`);
    expect(await tab.getAttribute('html', 'dir')).toBe('ltr');

    await tab.setInputFiles('#file-input', path.join(dir, `${doc.reference}.pdf`));
    await expect.poll(() => tab.getAttribute('#verdict', 'data-result')).toBe('signed');
    expect(await tab.textContent('#verdict-text')).toContain(
      'This is the signed file, byte for byte (signed on',
    );
    expect(await tab.textContent('#verdict-sha256')).toBe(sha256(signed));
    await tab.screenshot({ path: path.join(ARTIFACTS, 'verification-page-en.png'), fullPage: true });

    await tab.setInputFiles('#file-input', path.join(dir, 'modified.pdf'));
    await expect.poll(() => tab.getAttribute('#verdict', 'data-result')).toBe('different');
    expect(await tab.textContent('#verdict-text')).toContain('This file differs from the signed document');

    await tab.setInputFiles('#file-input', path.join(dir, 'original.pdf'));
    await expect.poll(() => tab.getAttribute('#verdict', 'data-result')).toBe('original');
    expect(await tab.textContent('#verdict-text')).toContain('it is the original file as uploaded');

    // Drag and drop: a DataTransfer holding the file, dropped on the zone.
    const drop = async (bytes: Buffer, name: string) => {
      // Runs in the page (DOM types are not in this project's TypeScript lib, hence a string).
      const dataTransfer = await tab.evaluateHandle(
        `(() => {
          const bin = atob(${JSON.stringify(bytes.toString('base64'))});
          const dt = new DataTransfer();
          dt.items.add(new File([Uint8Array.from(bin, (c) => c.charCodeAt(0))], ${JSON.stringify(name)}, { type: 'application/pdf' }));
          return dt;
        })()`,
      );
      await tab.dispatchEvent('#drop-zone', 'dragover', { dataTransfer });
      await tab.dispatchEvent('#drop-zone', 'drop', { dataTransfer });
    };
    await drop(signed, `${doc.reference}.pdf`);
    await expect.poll(() => tab.getAttribute('#verdict', 'data-result')).toBe('signed');
    await drop(modified(), 'modified.pdf');
    await expect.poll(() => tab.getAttribute('#verdict', 'data-result')).toBe('different');

    expect(posts).toEqual([]); // the file never left the page
    expect(errors).toEqual([]);
  });

  it('in Arabic, and posts the file to /check when Web Crypto is missing', async () => {
    const other = await browser.context.newPage();
    // As on a page served over plain HTTP (not a secure context): no crypto.subtle.
    await other.addInitScript({
      content:
        "Object.defineProperty(Crypto.prototype, 'subtle', { get: () => undefined, configurable: true });",
    });
    const posts: string[] = [];
    other.on('request', (r) => {
      if (r.method() === 'POST') posts.push(new URL(r.url()).pathname);
    });
    await other.goto(`${h.service.api.url}/v/${token}`);
    expect(await other.getAttribute('html', 'dir')).toBe('rtl');
    expect(await other.textContent('#check-help')).toContain('يُرسل الملف إلى هذا الخادم');
    await other.setInputFiles('#file-input', path.join(dir, `${doc.reference}.pdf`));
    await expect.poll(() => other.getAttribute('#verdict', 'data-result')).toBe('signed');
    expect(await other.textContent('#verdict-text')).toContain('هذا هو الملف الموقّع نفسه');
    await other.screenshot({ path: path.join(ARTIFACTS, 'verification-page-ar.png'), fullPage: true });
    await other.setInputFiles('#file-input', path.join(dir, 'modified.pdf'));
    await expect.poll(() => other.getAttribute('#verdict', 'data-result')).toBe('different');
    expect(await other.textContent('#verdict-text')).toContain('هذا الملف يختلف عن المستند الموقّع');
    expect(posts).toEqual([`/v/${token}/check`, `/v/${token}/check`]);
    await other.close();
  });
});
