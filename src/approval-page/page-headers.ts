import { frameAncestors } from '../features/accounts/embed-origins.ts';
import type { AppContext } from '../http/context.ts';

/**
 * What the page and its PDF share: never cached, the token in their address never sent on as a Referer, never
 * sniffed as another type, and framed only by the account's `embed_origins` (CSP frame-ancestors). Without any,
 * no one may frame them (and X-Frame-Options says DENY too); with some, X-Frame-Options is left out, as it
 * cannot name them and browsers that know CSP ignore it anyway. Answers the frame-ancestors source list.
 */
function sharedHeaders(ctx: AppContext, embedOrigins: readonly string[]): string {
  const ancestors = frameAncestors(embedOrigins);
  ctx.set('Cache-Control', 'no-store');
  ctx.set('Referrer-Policy', 'no-referrer');
  if (ancestors === "'none'") ctx.set('X-Frame-Options', 'DENY');
  else ctx.remove('X-Frame-Options');
  ctx.set('X-Content-Type-Options', 'nosniff');
  return ancestors;
}

export function pageHeaders(ctx: AppContext, embedOrigins: readonly string[] = []): void {
  const ancestors = sharedHeaders(ctx, embedOrigins);
  ctx.set(
    'Content-Security-Policy',
    `default-src 'self'; img-src 'self' data: blob:; script-src 'self'; style-src 'self'; worker-src 'self' blob:; connect-src 'self'; frame-ancestors ${ancestors}; base-uri 'none'; form-action 'self'`,
  );
}

/**
 * The PDF's policy is frame-ancestors alone: a browser shows a PDF in a page of its own making, which a
 * default-src would break (Chromium applies it to the viewer's own styles).
 */
export function pdfHeaders(ctx: AppContext, embedOrigins: readonly string[] = []): void {
  ctx.set('Content-Security-Policy', `frame-ancestors ${sharedHeaders(ctx, embedOrigins)}`);
}
