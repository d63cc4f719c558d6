import type Router from '@koa/router';
import type { Middleware } from 'koa';
import { requireScope } from '../middleware/authenticate.ts';
import type { AppState } from '../../http/context.ts';
import type { ApiOperation, OpenApiRegistry } from './registry.ts';

/**
 * Mounts a handler and describes it in the OpenAPI registry in one step, with the scope check the description
 * promises, so the document cannot leave out a route or misstate its permission.
 */
export function route(
  router: Router<AppState>,
  openapi: OpenApiRegistry,
  operation: ApiOperation,
  handler: Middleware<AppState>,
): void {
  openapi.add(operation);
  const koaPath = operation.path.replace(/\{(\w+)\}/g, ':$1');
  const chain: Middleware<AppState>[] =
    typeof operation.auth === 'string' ? [requireScope(operation.auth), handler] : [handler];
  router[operation.method](operation.operationId, koaPath, ...chain);
}
