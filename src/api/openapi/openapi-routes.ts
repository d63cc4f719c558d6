import Router from '@koa/router';
import type { AppState } from '../../http/context.ts';
import type { OpenApiRegistry } from './registry.ts';

export const API_VERSION = '1.0.0';

/** Public GET /openapi.json, rendered once from the registry (after every router has added its operations). */
export function createOpenApiRouter(
  openapi: OpenApiRegistry,
  options: { serverUrl: string },
): Router<AppState> {
  const router = new Router<AppState>();
  let rendered: string | undefined;
  router.get('/openapi.json', (ctx) => {
    rendered ??= JSON.stringify(openapi.document({ serverUrl: options.serverUrl, version: API_VERSION }));
    ctx.type = 'application/json';
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.body = rendered;
  });
  return router;
}
