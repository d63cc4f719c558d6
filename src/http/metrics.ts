import { finished } from 'node:stream';
import type { Middleware } from 'koa';
import type { HttpMetrics } from '../metrics/metrics.ts';
import type { AppState } from './context.ts';
import { STANDARD_METHODS, type RouteMatcher } from './methods.ts';

/** The route label of a request no route template matches (unknown paths, probes, typos: never the path). */
export const UNMATCHED_ROUTE = 'unmatched';

/** The methods counted by name (those HTTP defines); any other (WebDAV's, say) is `OTHER`: the label stays bounded. */
const COUNTED_METHODS = STANDARD_METHODS;

/** What the label needs of a router layer (`ctx.matched` of @koa/router, or a router's `match`). */
export interface RouteLayer {
  path: string | RegExp;
  methods: readonly string[];
  paramNames: readonly unknown[];
}

/**
 * The route template a request is labelled by: the path of the route layer that answers it, as written in the
 * router (`/api/v1/documents/:id`, `/a/:token`, `/files/:token/:filename`), never the request's path, so no token
 * or id ever becomes a label. Layers that are middleware (no methods) do not count. Among routes whose template
 * matches, one that takes the request's method wins, then the most specific (fewest parameters), as in the
 * method guard; no route at all is UNMATCHED_ROUTE.
 */
export function routeTemplate(layers: readonly RouteLayer[], method: string): string {
  const routes = layers.filter((layer) => layer.methods.length > 0);
  if (routes.length === 0) return UNMATCHED_ROUTE;
  const taking = routes.filter((layer) => layer.methods.includes(method));
  const candidates = taking.length > 0 ? taking : routes;
  let best = candidates[0]!;
  for (const layer of candidates) if (layer.paramNames.length < best.paramNames.length) best = layer;
  // A template is code, never input; a RegExp route (none today) is labelled by its source.
  return typeof best.path === 'string' ? best.path : `regexp:${best.path.source}`;
}

/** The method label: the request's method when HTTP defines it, else `OTHER`. */
export function methodLabel(method: string): string {
  return COUNTED_METHODS.has(method) ? method : 'OTHER';
}

/**
 * Times every request of the app to its last byte and counts it by method, route template and status. Mount it
 * first. The template comes from the layers the routers matched for this request (`ctx.matched`); a request
 * answered before any router ran (the method guard's 405 and OPTIONS) is matched against `routers`.
 */
export function httpMetrics(
  metrics: HttpMetrics | undefined,
  routers: readonly RouteMatcher[],
): Middleware<AppState> {
  if (!metrics) return (_ctx, next) => next();
  return async (ctx, next) => {
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const matched = ((ctx as { matched?: RouteLayer[] }).matched ?? []).filter((l) => l.methods.length > 0);
      const layers =
        matched.length > 0
          ? matched
          : routers.flatMap((router) => router.match(ctx.path, ctx.method).path as readonly RouteLayer[]);
      const method = methodLabel(ctx.method);
      const route = routeTemplate(layers, ctx.method);
      // Observed when the response has gone (or broken off): a streamed download counts until its last byte, and
      // the status is the one sent (an error that escaped every handler is Koa's 500).
      finished(ctx.res, () => {
        const seconds = Number(process.hrtime.bigint() - started) / 1e9;
        metrics.observeRequest({ method, route, status: ctx.res.statusCode }, seconds);
      });
    }
  };
}
