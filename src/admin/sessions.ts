import type { Middleware } from 'koa';
import { constantTimeEqual, randomToken, sha256Hex } from '../auth/tokens.ts';
import { adminSessionsStore, type AdminSession } from '../db/stores/admin-sessions-store.ts';
import { clockOf, type AdminContext, type AdminDeps, type AdminState } from './context.ts';
import { clearCookie, readCookie, setCookie } from './cookies.ts';
import { loginUrl } from './paths.ts';

export const SESSION_COOKIE = 'wathiq_admin_session';

export const SESSION_POLICY = {
  /** Signed out after this long without a request. */
  idleMs: 30 * 60_000,
  /** Signed out this long after signing in, however busy. */
  absoluteMs: 12 * 3600_000,
  /** last_seen_at is written at most this often, so reading pages does not write on every request. */
  touchEveryMs: 60_000,
};

// 256 random bits, base64url: 43 characters.
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/** Creates a session for the account, sets its cookie, and ends the one the browser had before (fixation). */
export async function startSession(ctx: AdminContext, deps: AdminDeps, accountId: string): Promise<void> {
  const now = clockOf(deps)();
  const store = adminSessionsStore(deps.db);
  const previous = readCookie(ctx, SESSION_COOKIE);
  if (previous && TOKEN_PATTERN.test(previous)) await store.delete(sha256Hex(previous));

  const token = randomToken(32);
  await store.create({
    idHash: sha256Hex(token),
    accountId,
    csrfToken: randomToken(32),
    now,
    expiresAt: new Date(now.getTime() + SESSION_POLICY.absoluteMs),
  });
  setCookie(ctx, deps.config, SESSION_COOKIE, token, { sameSite: 'Strict' });
}

export async function endSession(ctx: AdminContext, deps: AdminDeps): Promise<void> {
  if (ctx.state.session) await adminSessionsStore(deps.db).delete(ctx.state.session.idHash);
  clearCookie(ctx, deps.config, SESSION_COOKIE);
}

/** Reads the session cookie; a live session lands in `ctx.state.session`, a dead one is deleted and forgotten. */
/**
 * Ends the account's other sessions, keeping this one: once a second factor is in force, sessions opened with
 * the password alone (elsewhere, perhaps not by the holder) must not stay open.
 */
export async function endOtherSessions(deps: AdminDeps, session: AdminSession): Promise<void> {
  await adminSessionsStore(deps.db).deleteOthers(session.accountId, session.idHash);
}

export function loadSession(deps: AdminDeps): Middleware<AdminState> {
  const now = clockOf(deps);
  return async (ctx, next) => {
    const token = readCookie(ctx, SESSION_COOKIE);
    if (token) {
      const store = adminSessionsStore(deps.db);
      const idHash = TOKEN_PATTERN.test(token) ? sha256Hex(token) : undefined;
      const session = idHash ? await store.findByIdHash(idHash) : undefined;
      const at = now();
      const alive =
        session &&
        session.expiresAt.getTime() > at.getTime() &&
        at.getTime() - session.lastSeenAt.getTime() < SESSION_POLICY.idleMs;
      if (session && alive) {
        ctx.state.session = session;
        if (at.getTime() - session.lastSeenAt.getTime() >= SESSION_POLICY.touchEveryMs)
          await store.touch(session.idHash, at);
      } else {
        if (session) await store.delete(session.idHash);
        ctx.state.sessionEnded = true;
        clearCookie(ctx, deps.config, SESSION_COOKIE);
      }
    }
    await next();
  };
}

/** Pages behind sign-in: without a live session, off to the login page (303, so a POST is not replayed). */
export function requireSession(): Middleware<AdminState> {
  return async (ctx, next) => {
    if (!ctx.state.session) {
      const back = ctx.method === 'GET' ? ctx.originalUrl : undefined;
      ctx.redirect(loginUrl({ next: back, message: ctx.state.sessionEnded ? 'expired' : undefined }));
      ctx.status = 303;
      return;
    }
    await next();
  };
}

/** The session's CSRF token matches the form's `_csrf` field (compared in constant time). */
export function sessionTokenMatches(ctx: AdminContext, given: unknown): boolean {
  const expected = ctx.state.session?.csrfToken;
  return typeof given === 'string' && expected !== undefined && constantTimeEqual(given, expected);
}
