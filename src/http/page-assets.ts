import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type Router from '@koa/router';
import { AppError } from '../errors.ts';

/** A public page's static files, by the name they are served under. */
export type PageAssets = Record<string, { path: () => string; type: string }>;

/**
 * The shell's own stylesheet (colours, type, the Wathiq bar), shared by every public page: each page serves it
 * among its assets as `page.css`, and the layout (public-page.ts) links it before the page's own stylesheet.
 */
export const PAGE_CSS_ASSET: PageAssets = {
  'page.css': { path: () => fileURLToPath(new URL('./public/page.css', import.meta.url)), type: 'text/css' },
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
