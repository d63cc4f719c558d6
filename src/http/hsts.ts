import type { Middleware } from 'koa';

export const HSTS = 'max-age=31536000; includeSubDomains';

/**
 * Strict-Transport-Security on every response (API, approval page, files, dashboard) when the service is reached
 * over https. TLS ends at a proxy in front of us, so the socket says nothing: the configured PUBLIC_BASE_URL decides.
 * Set before the rest runs and again after it, so that no handler that resets headers (an error path) drops it.
 */
export function hsts(publicBaseUrl: string): Middleware {
  if (!publicBaseUrl.toLowerCase().startsWith('https:')) return (_ctx, next) => next();
  return async (ctx, next) => {
    ctx.set('Strict-Transport-Security', HSTS);
    try {
      await next();
    } finally {
      if (!ctx.headerSent) ctx.set('Strict-Transport-Security', HSTS);
    }
  };
}
