import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type Router from '@koa/router';
import { AppError } from '../errors.ts';
import type { AssetCatalog, AssetFile } from './asset-catalog.ts';
import type { ContentEncoding, PrecompressedAssets } from './precompressed.ts';

/** A public page's static files, by the name they are served under. */
export type PageAssets = Record<string, { path: () => string; type: string }>;

const pageCssPath = () => fileURLToPath(new URL('./public/page.css', import.meta.url));

/**
 * The shell's own stylesheet (colours, type, the Wathiq bar), shared by every public page: each page serves it
 * among its assets as `page.css`, and the layout (public-page.ts) links it before the page's own stylesheet.
 */
export const PAGE_CSS_ASSET: PageAssets = { 'page.css': { path: pageCssPath, type: 'text/css' } };
/** The same stylesheet as an entry of a fingerprinted catalog (asset-catalog.ts). */
export const PAGE_CSS_SOURCE: AssetFile = {
  kind: 'file',
  name: 'page.css',
  path: pageCssPath,
  type: 'text/css',
};

/**
 * `GET /assets/:file` on a page's router: only the table's own entries (the name is the client's, so
 * `/assets/constructor` is a 404), with their type, an hour's caching and no sniffing.
 */
export function serveAssets<State, Context>(router: Router<State, Context>, files: PageAssets): void {
  router.get('/assets/:file', async (ctx) => {
    const name = ctx.params.file ?? '';
    const asset = Object.hasOwn(files, name) ? files[name] : undefined;
    if (!asset) throw AppError.notFound('Asset');
    ctx.type = asset.type;
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.body = await readFile(asset.path());
  });
}

/** The weight `accept` gives `coding` (RFC 9110 §12.5.3): its own q, else `*`'s, else 0. */
function weightOf(accept: string, coding: string): number {
  let star: number | undefined;
  for (const part of accept.split(',')) {
    const [token = '', ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => /^\s*q\s*=\s*([0-9.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
    const weight = q === undefined ? 1 : Math.min(1, Number(q) || 0);
    if (token.trim() === coding) return weight;
    if (token.trim() === '*') star = weight;
  }
  return star ?? 0;
}

/** Brotli when the client takes it (it is the smaller), else gzip, else the file as it is. */
export function chooseEncoding(acceptEncoding: string | undefined): ContentEncoding | 'identity' {
  const accept = acceptEncoding ?? '';
  if (weightOf(accept, 'br') > 0) return 'br';
  if (weightOf(accept, 'gzip') > 0) return 'gzip';
  return 'identity';
}

/** A year, immutable: the name changes whenever the content does (asset-catalog.ts). */
export const IMMUTABLE = 'public, max-age=31536000, immutable';

/**
 * `GET /assets/:file` and `/assets/:folder/:file` for a fingerprinted catalog: only the catalog's own names (any
 * other is a 404, an old fingerprint included), compressed as the client's Accept-Encoding allows from the forms
 * made once in `compressed`, and cached for a year.
 */
export function serveCatalog<State, Context>(
  router: Router<State, Context>,
  catalog: AssetCatalog,
  compressed: PrecompressedAssets,
): void {
  compressed.register(catalog.entries.values());
  for (const route of ['/assets/:file', '/assets/:folder/:file']) {
    router.get(route, async (ctx) => {
      const { folder, file = '' } = ctx.params as { folder?: string; file?: string };
      const entry = catalog.entries.get(folder === undefined ? file : `${folder}/${file}`);
      if (!entry) throw AppError.notFound('Asset');
      const { body, encoding } = await compressed.get(entry, chooseEncoding(ctx.get('accept-encoding')));
      ctx.type = entry.type;
      ctx.set('Cache-Control', IMMUTABLE);
      ctx.set('Vary', 'Accept-Encoding');
      ctx.set('X-Content-Type-Options', 'nosniff');
      if (encoding !== 'identity') ctx.set('Content-Encoding', encoding);
      ctx.body = body;
    });
  }
}
