import type Router from '@koa/router';
import { verifySecondFactor } from '../../features/accounts/second-factor.ts';
import { currentChallenge, endChallenge } from '../challenges.ts';
import { clockOf, type AdminDeps, type AdminState } from '../context.ts';
import { admitCodeAttempt, loginThrottlePolicy, settleCodeAttempt } from '../login-throttle.ts';
import { checkLoginToken, loginToken, refuseInsideWait, stringField, throttleLines } from '../login-token.ts';
import { ADMIN_PATHS, loginUrl, safeNext } from '../paths.ts';
import { renderPage, seeOther } from '../render.ts';
import { startSession } from '../sessions.ts';
import { codePage } from '../views/code-page.ts';
import { pageContextOf } from '../views/page.ts';

/**
 * The second step of sign-in: a code from the account's authenticator app, or a recovery code, for the
 * challenge the password step left in the browser. Only an accepted code creates a session. Codes are
 * throttled per account (whatever the sign-in or address they come through) and per address.
 */
export function mountCodeRoutes(router: Router<AdminState>, deps: AdminDeps): void {
  const now = clockOf(deps);
  const throttle = loginThrottlePolicy(deps.config.login);
  const expired = loginUrl({ message: 'code_expired' });

  router.get(ADMIN_PATHS.loginCode, async (ctx) => {
    if (ctx.state.session) return seeOther(ctx, ADMIN_PATHS.home);
    if (!(await currentChallenge(ctx, deps))) return seeOther(ctx, expired);
    renderPage(ctx, 200, codePage(pageContextOf(ctx), { loginToken: loginToken(ctx, deps) }));
  });

  router.post(ADMIN_PATHS.loginCode, async (ctx) => {
    const token = checkLoginToken(ctx, deps);
    const challenge = await currentChallenge(ctx, deps);
    if (!challenge) return seeOther(ctx, expired);
    const page = pageContextOf(ctx);
    const { t } = page;
    const show = (status: number, errors: string[]) =>
      renderPage(ctx, status, codePage(page, { loginToken: token, errors }));
    const code = stringField(ctx, 'code', 64);
    if (!code) return show(422, [t('codeMissing')]);

    const at = now();
    const who = { accountId: challenge.accountId, ip: ctx.ip };
    const gate = await admitCodeAttempt(deps.db, throttle, { ...who, now: at });
    // Inside the wait: refused before the code is looked at.
    if (!gate.allowed) return show(429, [refuseInsideWait(ctx, t, gate.retryAt, at)]);

    const result = await verifySecondFactor(deps, challenge.accountId, code, at);
    await settleCodeAttempt(deps.db, throttle, { ...who, success: result.ok, now: at });
    if (!result.ok && result.reason === 'not_enrolled') {
      // Turned off since the password was given: start again, and the password alone will do.
      await endChallenge(ctx, deps, challenge);
      return seeOther(ctx, expired);
    }
    if (!result.ok)
      return show(401, [
        t(result.reason === 'replayed' ? 'codeReplayed' : 'codeWrong'),
        ...throttleLines(t, gate),
      ]);

    // One challenge opens one session, even when two right codes arrive at once.
    if (!(await endChallenge(ctx, deps, challenge))) return seeOther(ctx, expired);
    await startSession(ctx, deps, challenge.accountId);
    seeOther(ctx, safeNext(challenge.next) ?? ADMIN_PATHS.home);
  });
}
