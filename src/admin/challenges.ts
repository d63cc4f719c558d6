import { randomToken, sha256Hex } from '../auth/tokens.ts';
import { loginChallengesStore, type LoginChallenge } from '../db/stores/login-challenges-store.ts';
import { clockOf, type AdminContext, type AdminDeps } from './context.ts';
import { clearCookie, readCookie, setCookie } from './cookies.ts';

/**
 * The state between the two steps of sign-in: the password was right, the code is still to come. A challenge
 * is its own cookie and its own table, never a session, so nothing behind sign-in opens for it.
 */
export const CHALLENGE_COOKIE = 'wathiq_admin_challenge';

export const CHALLENGE_POLICY = {
  /** The code must come within this long of the password. */
  ttlMs: 5 * 60_000,
  /** Live challenges kept per account (the newest). */
  keepPerAccount: 5,
};

const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export async function startChallenge(
  ctx: AdminContext,
  deps: AdminDeps,
  accountId: string,
  next: string | undefined,
): Promise<void> {
  const now = clockOf(deps)();
  const token = randomToken(32);
  await loginChallengesStore(deps.db).create(
    {
      idHash: sha256Hex(token),
      accountId,
      next: next ?? null,
      createdAt: now,
      expiresAt: new Date(now.getTime() + CHALLENGE_POLICY.ttlMs),
    },
    CHALLENGE_POLICY.keepPerAccount,
  );
  setCookie(ctx, deps.config, CHALLENGE_COOKIE, token, { sameSite: 'Strict' });
}

/** The live challenge the browser's cookie names; an expired one is deleted and its cookie cleared. */
export async function currentChallenge(
  ctx: AdminContext,
  deps: AdminDeps,
): Promise<LoginChallenge | undefined> {
  const token = readCookie(ctx, CHALLENGE_COOKIE);
  if (!token || !TOKEN_PATTERN.test(token)) return undefined;
  const store = loginChallengesStore(deps.db);
  const challenge = await store.find(sha256Hex(token));
  if (challenge && challenge.expiresAt.getTime() > clockOf(deps)().getTime()) return challenge;
  if (challenge) await store.take(challenge.idHash);
  clearCookie(ctx, deps.config, CHALLENGE_COOKIE);
  return undefined;
}

/** Ends the challenge; true for the one request that ended it, so one challenge opens one session at most. */
export async function endChallenge(
  ctx: AdminContext,
  deps: AdminDeps,
  challenge: LoginChallenge,
): Promise<boolean> {
  clearCookie(ctx, deps.config, CHALLENGE_COOKIE);
  return loginChallengesStore(deps.db).take(challenge.idHash);
}
