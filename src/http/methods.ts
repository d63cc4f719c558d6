import type { Middleware } from 'koa';
import { AppError } from '../errors.ts';
import type { AppState } from './context.ts';

/**
 * The methods HTTP itself defines (RFC 9110 §9, PATCH from RFC 5789, and QUERY, the safe method with a body of
 * the httpbis working group). A method outside this set is one the server does not implement anywhere: 501,
 * whatever the path (RFC 9110 §15.6.2). Node's parser refuses names it does not know at all (see
 * client-error.ts); this catches the WebDAV-style ones it does parse (PROPFIND, MKCOL, PURGE, …).
 */
export const STANDARD_METHODS: ReadonlySet<string> = new Set([
  'GET',
  'HEAD',
  'POST',
  'PUT',
  'PATCH',
  'DELETE',
  'OPTIONS',
  'TRACE',
  'CONNECT',
  'QUERY',
]);

/** A route layer as the guard reads it (@koa/router's `Layer`): its methods, its parameters, its path test. */
export interface MatchableLayer {
  methods: readonly string[];
  paramNames: readonly unknown[];
  match(path: string): boolean;
}

/** What the guard needs of a router (any router's state type). */
export interface RouteMatcher {
  /** Its layers in order, routes and middleware (nested routers are flattened into their parent's). */
  stack: readonly MatchableLayer[];
  match(
    path: string,
    method: string,
  ): { path: readonly { methods: readonly string[]; paramNames: readonly unknown[] }[] };
}

/** The order the Allow header lists methods in. */
const ALLOW_ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

/** The routes (layers with methods) of the routers, in order. */
const routesOf = (routers: readonly RouteMatcher[]): MatchableLayer[] =>
  routers.flatMap((router) => router.stack.filter((layer) => layer.methods.length > 0));

/**
 * Whether the most specific of `routes` at `path` take `method` (then `allowedAmong` lists it, if the Allow header
 * names such a method); undefined when no route has the path. The guard's question for nearly every request,
 * answered without building the list: no arrays, no set, no header string.
 */
function takenAt(routes: readonly MatchableLayer[], path: string, method: string): boolean | undefined {
  let fewestParams = Infinity;
  let taken = false;
  for (const layer of routes) {
    if (!layer.match(path)) continue;
    const params = layer.paramNames.length;
    if (params < fewestParams) {
      fewestParams = params;
      taken = layer.methods.includes(method);
    } else if (params === fewestParams && !taken) {
      taken = layer.methods.includes(method);
    }
  }
  return fewestParams === Infinity ? undefined : taken;
}

/** The methods Allow lists but OPTIONS, which the guard answers itself. */
const ROUTED: ReadonlySet<string> = new Set(ALLOW_ORDER.filter((m) => m !== 'OPTIONS'));

/** The methods `routes` answer at `path`; see allowedMethods. */
function allowedAmong(routes: readonly MatchableLayer[], path: string): string[] {
  let matching: MatchableLayer[] | undefined;
  let fewestParams = Infinity;
  for (const layer of routes) {
    if (!layer.match(path)) continue;
    (matching ??= []).push(layer);
    fewestParams = Math.min(fewestParams, layer.paramNames.length);
  }
  if (!matching) return [];
  const methods = new Set<string>(['OPTIONS']);
  for (const layer of matching)
    if (layer.paramNames.length === fewestParams) for (const m of layer.methods) methods.add(m);
  return ALLOW_ORDER.filter((m) => methods.has(m));
}

/**
 * The methods the routers answer at `path` (HEAD comes with GET, OPTIONS with any); empty when no route has that
 * path. Where templates overlap, the most specific wins: `/webhooks/events` is the event catalogue (GET), not a
 * `/webhooks/{id}` with a strange id. Nested routers are flattened into their parent's stack, so the top-level
 * routers are enough.
 */
export function allowedMethods(routers: readonly RouteMatcher[], path: string): string[] {
  return allowedAmong(routesOf(routers), path);
}

/**
 * The routers' routes, listed again only when a router's stack has changed size (routes are added while the app is
 * built, not while it serves). Every request passes the guard: testing these routes' paths directly, instead of
 * through each router's `match`, spares it the match results, the router's per-layer debug call and the middleware
 * layers (in bench:lifecycle's reads the routers' matching was a quarter of what the API allocated).
 */
function routeTable(routers: readonly RouteMatcher[]): () => readonly MatchableLayer[] {
  let sizes: number[] = [];
  let routes: MatchableLayer[] = [];
  const changed = () => {
    for (let i = 0; i < routers.length; i++) if (routers[i]!.stack.length !== sizes[i]) return true;
    return false;
  };
  return () => {
    if (changed()) {
      sizes = routers.map((router) => router.stack.length);
      routes = routesOf(routers);
    }
    return routes;
  };
}

/**
 * Method conformance for every route of the given routers, before any body is read or any key is checked:
 * an unknown method is 501; a known method the resource does not support (TRACE included) is 405 with `Allow`;
 * OPTIONS is 204 with `Allow`. A path no router has falls through to the 404 further down.
 */
export function methodGuard(routers: readonly RouteMatcher[]): Middleware<AppState> {
  const routes = routeTable(routers);
  return async (ctx, next) => {
    if (!STANDARD_METHODS.has(ctx.method)) {
      throw new AppError('not_implemented', `The ${ctx.method} method is not implemented by this server`);
    }
    const taken = takenAt(routes(), ctx.path, ctx.method);
    if (taken === undefined || (taken && ROUTED.has(ctx.method))) {
      await next();
      return;
    }
    const allowed = allowedAmong(routes(), ctx.path);
    const allow = allowed.join(', ');
    if (ctx.method === 'OPTIONS') {
      ctx.set('Allow', allow);
      ctx.status = 204;
      return;
    }
    if (!allowed.includes(ctx.method)) {
      throw new AppError(
        'method_not_allowed',
        `${ctx.method} is not allowed on ${ctx.path}; allowed: ${allow}`,
        {},
        { Allow: allow },
      );
    }
    await next();
  };
}
