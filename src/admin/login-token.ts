import { constantTimeEqual, randomToken } from '../auth/tokens.ts';
import type { AdminContext, AdminDeps } from './context.ts';
import { readCookie, setCookie } from './cookies.ts';
import { CSRF_FIELD, formField, isSameOriginRequest } from './csrf.ts';
import { AdminPageError } from './errors.ts';
import type { Translate } from './i18n.ts';
import type { LoginGate } from './login-throttle.ts';

/**
 * Before there is a session, the sign-in forms (password, then code) are protected by a double-submit token:
 * cookie and hidden field, plus the same-origin check every dashboard POST gets.
 */
export const LOGIN_TOKEN_COOKIE = 'wathiq_admin_login';
const LOGIN_TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/** The browser's login token, set now if it has none. */
export function loginToken(ctx: AdminContext, deps: AdminDeps): string {
  const existing = readCookie(ctx, LOGIN_TOKEN_COOKIE);
  if (existing && LOGIN_TOKEN_PATTERN.test(existing)) return existing;
  const token = randomToken(32);
  setCookie(ctx, deps.config, LOGIN_TOKEN_COOKIE, token, { sameSite: 'Strict' });
  return token;
}

/** A sign-in form post from this dashboard with the browser's login token; else 403. Returns the token. */
export function checkLoginToken(ctx: AdminContext, deps: AdminDeps): string {
  const cookieToken = readCookie(ctx, LOGIN_TOKEN_COOKIE);
  const formToken = formField(ctx, CSRF_FIELD);
  if (
    !isSameOriginRequest(ctx, deps.config) ||
    !cookieToken ||
    typeof formToken !== 'string' ||
    !constantTimeEqual(formToken, cookieToken)
  )
    throw AdminPageError.csrf();
  return cookieToken;
}

/** Seconds to show for a wait: whole, at least 1. */
export const waitSeconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

/** A trimmed form field (a password as typed) of 1..max characters, or undefined. */
export function stringField(ctx: AdminContext, name: string, max: number): string | undefined {
  const value = formField(ctx, name);
  if (typeof value !== 'string') return undefined;
  const trimmed = name === 'password' ? value : value.trim();
  return trimmed.length > 0 && trimmed.length <= max ? trimmed : undefined;
}

/** What a failed attempt adds to its message: the wait it started, or the free attempts left when few. */
export function throttleLines(t: Translate, gate: Extract<LoginGate, { allowed: true }>): string[] {
  if (gate.delayAfterFailureMs > 0)
    return [t('loginWait', { seconds: waitSeconds(gate.delayAfterFailureMs) })];
  if (gate.freeAttemptsLeft <= 2) return [t('loginAttemptsLeft', { count: gate.freeAttemptsLeft })];
  return [];
}

/** An attempt inside the wait: 429 with Retry-After, and the line that says how long. */
export function refuseInsideWait(ctx: AdminContext, t: Translate, retryAt: Date, now: Date): string {
  const seconds = waitSeconds(retryAt.getTime() - now.getTime());
  ctx.set('Retry-After', String(seconds));
  return t('loginWait', { seconds });
}
