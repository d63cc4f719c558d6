import Router from '@koa/router';
import { buildAssetCatalog, type AssetCatalog } from '../../http/asset-catalog.ts';
import type { AppState } from '../../http/context.ts';
import type { ApiDeps } from '../../http/deps.ts';
import { html } from '../../http/html.ts';
import { serveCatalog } from '../../http/page-assets.ts';
import { pageAssetsFor } from '../../http/precompressed.ts';
import { REFERENCE_ASSET_SOURCES } from './assets.ts';

/**
 * Scripts only from this origin, never inline or evaluated. Styles allow 'unsafe-inline' because the renderer (Vue)
 * writes its stylesheet into a <style> element and sets style attributes as it draws; a style cannot run code.
 * connect-src 'self' lets the page read the document and the try-it console call this API, and nothing else.
 */
const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

function renderReferencePage(assets: AssetCatalog, documentUrl: string): string {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>Wathiq API reference</title>
        <link rel="icon" href="data:," />
        <script src="${assets.url('reference.js')}" defer></script>
        <script src="${assets.url('scalar.js')}" defer></script>
      </head>
      <body>
        <div id="reference" data-document="${documentUrl}"></div>
      </body>
    </html> `.toString();
}

/**
 * Public `GET /docs`: the OpenAPI document (`GET /openapi.json`) rendered by Scalar with its try-it console, and
 * the page's fingerprinted assets under `/docs/assets`, compressed once and cached for a year.
 */
export function createReferenceRouter(
  deps: Pick<ApiDeps, 'config' | 'logger' | 'pageAssets'>,
  apiPrefix: string,
): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/docs' });
  const assets = buildAssetCatalog(`${apiPrefix}/docs/assets`, REFERENCE_ASSET_SOURCES);
  const page = renderReferencePage(assets, `${apiPrefix}/openapi.json`);
  serveCatalog(router, assets, deps.pageAssets ?? pageAssetsFor(deps.config, deps.logger));
  router.get('/', (ctx) => {
    ctx.type = 'text/html';
    // The page names its assets by their content, so a deployment's new renderer is picked up within five minutes.
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.set('Content-Security-Policy', CSP);
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('X-Frame-Options', 'DENY');
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.body = page;
  });
  return router;
}
