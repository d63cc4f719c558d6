import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import type { AppState } from '../../http/context.ts';

const ACCEPTABLE = /^[A-Za-z0-9._:-]{1,128}$/;

/** Echoes a caller's X-Request-Id when it is sane, otherwise makes one; every response carries it. */
export function requestId(): Middleware<AppState> {
  return async (ctx, next) => {
    const given = ctx.get('x-request-id');
    const id = ACCEPTABLE.test(given) ? given : randomUUID();
    ctx.state.requestId = id;
    ctx.set('X-Request-Id', id);
    await next();
  };
}
