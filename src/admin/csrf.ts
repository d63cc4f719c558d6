import type { Middleware } from 'koa';
import type { Config } from '../config.ts';
import type { AdminContext, AdminState } from './context.ts';
import { AdminPageError } from './errors.ts';
import { sessionTokenMatches } from './sessions.ts';

export const CSRF_FIELD = '_csrf';

/**
 * The request was sent by a page of this site: `Sec-Fetch-Site` (when the browser sends it) says same-origin,
 * and `Origin` — or, failing that, `Referer` — is this site's origin. Browsers send Origin on every POST, so a
 * POST with neither is refused.
 */
export function isSameOriginRequest(ctx: AdminContext, config: Config): boolean {
  const fetchSite = ctx.get('sec-fetch-site');
  if (fetchSite && fetchSite !== 'same-origin' && fetchSite !== 'none') return false;

  // This server's own origin. (Not `ctx.origin`: since Koa 3 that is the request's Origin header.)
  const allowed = new Set([`${ctx.protocol}://${ctx.host}`, new URL(config.http.publicBaseUrl).origin]);
  const origin = ctx.get('origin');
  if (origin) return allowed.has(origin);
  const referer = ctx.get('referer');
  if (!referer) return false;
  try {
    return allowed.has(new URL(referer).origin);
  } catch {
    return false;
  }
}

export function formField(ctx: AdminContext, name: string): unknown {
  const body = ctx.request.body as Record<string, unknown> | undefined;
  return body && Object.hasOwn(body, name) ? body[name] : undefined;
}

/** Every state-changing request of a signed-in page: same origin and the session's token in the form; else 403. */
export function csrfProtection(config: Config): Middleware<AdminState> {
  return async (ctx, next) => {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      if (!isSameOriginRequest(ctx, config) || !sessionTokenMatches(ctx, formField(ctx, CSRF_FIELD)))
        throw AdminPageError.csrf();
    }
    await next();
  };
}
