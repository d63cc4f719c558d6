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

/**
 * The router's middleware, run only when one of its routes has the request's path (any method: a method it lacks
 * is its 405, or another router's route). Testing the routes' own path expressions allocates nothing, where the
 * router's walk over its layers builds match results and makes a debug call with its arguments for each layer: so
 * routers that share a prefix (the API's, one a feature) cost a request only the walk of the one that answers it.
 * The router's middleware layers (authentication and the like) still run, in order, for the routes that match.
 */
export function whereItsRoutesAre(router: Router<AppState>): Middleware<AppState> {
  const dispatch = router.routes() as Middleware<AppState>;
  // Routes are added while the app is built, not while it serves; listed again should the stack change.
  let size = -1;
  let routes: Router<AppState>['stack'] = [];
  return (ctx, next) => {
    if (router.stack.length !== size) {
      size = router.stack.length;
      routes = router.stack.filter((layer) => layer.methods.length > 0);
    }
    const path = ctx.path;
    for (const layer of routes) if (layer.match(path)) return dispatch(ctx, next) as Promise<void>;
    return next();
  };
}
