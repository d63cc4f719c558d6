import type Router from '@koa/router';
import type { Middleware } from 'koa';
import type { AppState } from './context.ts';

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The router's middleware, run only for paths under its prefix. Every layer of a router with a prefix starts with
 * it, so a path elsewhere can match none of them: skipping the router spares each request the router's walk
 * over all its layers (a regular expression and a debug call each) and its per-request match results. The
 * prefix counts as a whole segment, as the routers' own layers test it (`/a` is not under `/api`), and in any
 * case, as their routes match. A router without a prefix runs for every path.
 */
export function underItsPrefix(router: Router<AppState>): Middleware<AppState> {
  const dispatch = router.routes() as Middleware<AppState>;
  const prefix = router.opts.prefix?.replace(/\/+$/, '');
  if (!prefix) return dispatch;
  const under = new RegExp(`^${escapeRegExp(prefix)}(?:/|$)`, 'i');
  return (ctx, next) => (under.test(ctx.path) ? (dispatch(ctx, next) as Promise<void>) : next());
}
