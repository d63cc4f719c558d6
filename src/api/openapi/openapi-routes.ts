import Router from '@koa/router';
import type { AppState } from '../../http/context.ts';
import type { OpenApiRegistry } from './registry.ts';

export const API_VERSION = '1.0.0';

/**
 * The document as served and as committed (openapi.json). The server URL is relative (resolved against the
 * document's own address), so the document is the same whatever PUBLIC_BASE_URL a deployment has.
 */
export function openApiDocument(openapi: OpenApiRegistry, apiPrefix: string): Record<string, unknown> {
  return openapi.document({ serverUrl: apiPrefix, version: API_VERSION });
}

/** Public GET /openapi.json, rendered once from the registry (after every router has added its operations). */
export function createOpenApiRouter(openapi: OpenApiRegistry, apiPrefix: string): Router<AppState> {
  const router = new Router<AppState>();
  let rendered: string | undefined;
  router.get('/openapi.json', (ctx) => {
    rendered ??= JSON.stringify(openApiDocument(openapi, apiPrefix));
    ctx.type = 'application/json';
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.body = rendered;
  });
  return router;
}
