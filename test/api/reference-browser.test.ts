import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { brotliDecompressSync } from 'node:zlib';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../helpers/browser.ts';
import { startTestService, type TestAccount, type TestService } from '../helpers/test-service.ts';

/**
 * The API reference at /api/v1/docs: the page and its assets over HTTP, and the page in Debian's Chromium under
 * its own CSP, listing every operation of the served document and calling the API from its try-it console.
 */
let service: TestService;
let account: TestAccount;
let browser: Awaited<ReturnType<typeof launchBrowser>>;

beforeAll(async () => {
  service = await startTestService({ worker: false });
  account = await service.createAccount();
  browser = await launchBrowser();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await service?.close();
});

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

/** "GET /documents/{id}" for every operation of the document the service serves. */
async function servedOperations(): Promise<string[]> {
  const doc = (await (await fetch(`${service.baseUrl}/openapi.json`)).json()) as {
    paths: Record<string, Record<string, unknown>>;
  };
  return Object.entries(doc.paths)
    .flatMap(([p, item]) => METHODS.filter((m) => m in item).map((m) => `${m.toUpperCase()} ${p}`))
    .sort();
}

/** The page's script URLs, in the order the page loads them. */
async function scriptUrls(): Promise<string[]> {
  const page = await (await fetch(`${service.baseUrl}/docs`)).text();
  return [...page.matchAll(/<script src="([^"]+)"/g)].map((m) => m[1]!);
}

describe('GET /api/v1/docs over HTTP', () => {
  it('is an HTML page with a strict CSP that loads only scripts of this origin, none inline', async () => {
    const res = await fetch(`${service.baseUrl}/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self';");
    expect(csp).toContain("connect-src 'self';");
    expect(csp).not.toMatch(/unsafe-eval|script-src[^;]*unsafe-inline/);
    const body = await res.text();
    expect(body).toContain('data-document="/api/v1/openapi.json"');
    expect(body).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/);
    expect(await scriptUrls()).toEqual([
      expect.stringMatching(/^\/api\/v1\/docs\/assets\/reference\.[0-9a-f]{16}\.js$/),
      expect.stringMatching(/^\/api\/v1\/docs\/assets\/scalar\.[0-9a-f]{16}\.js$/),
    ]);
  });

  it('serves the renderer from node_modules under its content hash, cached for a year, brotli when asked', async () => {
    const [, scalar] = await scriptUrls();
    const res = await fetch(`${service.api.url}${scalar}`, { headers: { 'Accept-Encoding': 'br' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('content-encoding')).toBe('br');
    // undici decodes brotli itself; the bytes are the package's standalone bundle either way.
    const served = Buffer.from(await res.arrayBuffer());
    const bytes = served.subarray(0, 2).toString() === '(f' ? served : brotliDecompressSync(served);
    const main = createRequire(import.meta.url).resolve('@scalar/api-reference');
    expect(bytes.equals(await readFile(path.join(path.dirname(main), 'browser', 'standalone.js')))).toBe(
      true,
    );
  });

  it('answers a name that is not an asset of the page with a 404 envelope', async () => {
    for (const name of [
      'scalar.js',
      'scalar.0000000000000000.js',
      '__proto__',
      'constructor',
      '..%2Fopenapi.json',
    ]) {
      const res = await fetch(`${service.baseUrl}/docs/assets/${name}`);
      expect(res.status, name).toBe(404);
      expect(((await res.json()) as { success: boolean }).success, name).toBe(false);
    }
  });

  it('is declared in the document as public, like the document itself', async () => {
    const doc = (await (await fetch(`${service.baseUrl}/openapi.json`)).json()) as {
      paths: Record<
        string,
        { get?: { security?: unknown[]; responses: Record<string, { content?: object }> } }
      >;
    };
    const op = doc.paths['/docs']?.get;
    expect(op?.security).toEqual([]);
    expect(Object.keys(op?.responses['200']?.content ?? {})).toEqual(['text/html']);
  });
});

describe('the reference in Chromium', () => {
  let page: Page;
  const problems: string[] = [];

  beforeAll(async () => {
    page = await browser.context.newPage();
    // Chromium also logs each CSP violation to the console; the event says which directive and what it blocked.
    await page.addInitScript({
      content: `document.addEventListener('securitypolicyviolation', (e) =>
        console.error('CSP violation: ' + e.effectiveDirective + ' blocked ' + e.blockedURI + ' at ' +
          e.sourceFile + ':' + e.lineNumber + ':' + e.columnNumber));`,
    });
    page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warning') problems.push(`${m.type()}: ${m.text()}`);
    });
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()}`));
    page.on('request', (r) => {
      if (!r.url().startsWith(service.api.url) && !r.url().startsWith('data:'))
        problems.push(`request to another origin: ${r.url()}`);
    });
    await page.goto(`${service.baseUrl}/docs`);
  }, 60_000);

  it('lists every operation of the served document, and no other', async () => {
    const expected = await servedOperations();
    expect(expected.length).toBeGreaterThan(30);
    const listed = async () => {
      const ids = await page.evaluate<string[]>(
        `[...document.querySelectorAll('[data-sidebar-id]')].map((item) => item.dataset.sidebarId)`,
      );
      const operations = new Set<string>();
      for (const id of ids) {
        const m = /^api-1\/tag\/[^/]+\/(GET|PUT|POST|DELETE|PATCH)(\/.*)$/.exec(id);
        if (m) operations.add(`${m[1]} ${m[2]}`);
      }
      return [...operations].sort();
    };
    await expect.poll(listed, { timeout: 30_000 }).toEqual(expected);
  });

  it("sends a request with the integrator's key from the try-it console and shows the answer", async () => {
    await page.locator('[data-sidebar-id="api-1/tag/documents/GET/documents"] > a').click();
    const section = page.locator('[id="api-1/tag/documents/GET/documents"]:not([data-placeholder])');
    await section.getByRole('button', { name: /test request/i }).click();
    const client = page.getByRole('dialog');
    await client.getByLabel('Bearer Token').fill(`${account.key}:${account.secret}`);
    const [request, response] = await Promise.all([
      page.waitForRequest((r) => new URL(r.url()).pathname === '/api/v1/documents'),
      page.waitForResponse((r) => new URL(r.url()).pathname === '/api/v1/documents'),
      client.locator('[data-addressbar-action="send"]').first().click(),
    ]);
    expect(request.headers().authorization).toBe(account.authorization);
    expect(response.status()).toBe(200);
    await expect.poll(() => client.innerText(), { timeout: 10_000 }).toMatch(/200[\s\S]*"success": true/);
  });

  it('loaded with no CSP violation, console error or request to another origin', () => {
    expect(problems).toEqual([]);
  });
});
