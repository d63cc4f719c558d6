import type Router from '@koa/router';
import type { Middleware } from 'koa';
import { requireScopes } from '../middleware/authenticate.ts';
import type { AppState } from '../../http/context.ts';
import { claimIdempotencyKey } from '../middleware/idempotency.ts';
import { requiredScopes, type ApiOperation, type OpenApiRegistry } from './registry.ts';

/**
 * Mounts a handler and describes it in the OpenAPI registry in one step, with the scope check the description
 * promises (every scope it names), so the document cannot leave out a route or misstate its permission. Behind authentication, the
 * Idempotency-Key step follows the scope check.
 */
export function route(
  router: Router<AppState>,
  openapi: OpenApiRegistry,
  operation: ApiOperation,
  handler: Middleware<AppState>,
): void {
  openapi.add(operation);
  const koaPath = operation.path.replace(/\{(\w+)\}/g, ':$1');
  // An Idempotency-Key is claimed (or its stored response replayed) only once the key's scope is checked.
  const chain: Middleware<AppState>[] = [
    ...(operation.auth === false ? [] : [requireScopes(requiredScopes(operation))]),
    ...(operation.auth === false ? [] : [claimIdempotencyKey]),
    handler,
  ];
  router[operation.method](operation.operationId, koaPath, ...chain);
}
