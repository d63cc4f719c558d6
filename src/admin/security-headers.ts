import type { Middleware } from 'koa';
import type { AdminState } from './context.ts';

// Scripts and styles come only from the dashboard's own asset files: no inline script can run, even if some
// value escaped escaping.
const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

/** Headers for every dashboard response; pages are never cached (they carry keys, secrets, CSRF tokens). */
export function securityHeaders(): Middleware<AdminState> {
  return async (ctx, next) => {
    ctx.set('Content-Security-Policy', CSP);
    ctx.set('X-Frame-Options', 'DENY');
    ctx.set('X-Content-Type-Options', 'nosniff');
    // same-origin: our own form posts still carry Referer/Origin for the CSRF origin check; nothing leaks out.
    ctx.set('Referrer-Policy', 'same-origin');
    ctx.set('Cross-Origin-Opener-Policy', 'same-origin');
    ctx.set('Cache-Control', 'no-store');
    await next();
  };
}
