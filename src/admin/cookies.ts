import type { Config } from '../config.ts';
import type { AdminContext } from './context.ts';

export const ADMIN_COOKIE_PATH = '/admin';

export interface CookieOptions {
  /** Omitted: a browser-session cookie. 0: delete. */
  maxAgeSeconds?: number;
  sameSite: 'Strict' | 'Lax';
}

/**
 * Cookies are written by hand rather than with Koa's `ctx.cookies.set`, which refuses `Secure` on a plain-HTTP
 * request: behind a TLS-terminating proxy the request looks like HTTP while PUBLIC_BASE_URL says https.
 */
export function setCookie(
  ctx: AdminContext,
  config: Config,
  name: string,
  value: string,
  options: CookieOptions,
): void {
  const parts = [`${name}=${value}`, `Path=${ADMIN_COOKIE_PATH}`, 'HttpOnly', `SameSite=${options.sameSite}`];
  if (options.maxAgeSeconds !== undefined) {
    parts.push(`Max-Age=${options.maxAgeSeconds}`);
    if (options.maxAgeSeconds === 0) parts.push('Expires=Thu, 01 Jan 1970 00:00:00 GMT');
  }
  if (isSecureContext(ctx, config)) parts.push('Secure');
  ctx.append('Set-Cookie', parts.join('; '));
}

export function clearCookie(ctx: AdminContext, config: Config, name: string): void {
  setCookie(ctx, config, name, '', { maxAgeSeconds: 0, sameSite: 'Strict' });
}

export function readCookie(ctx: AdminContext, name: string): string | undefined {
  return ctx.cookies.get(name) || undefined;
}

export function isSecureContext(ctx: AdminContext, config: Config): boolean {
  return ctx.secure || config.http.publicBaseUrl.startsWith('https:');
}
