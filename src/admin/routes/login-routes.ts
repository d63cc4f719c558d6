import type Router from '@koa/router';
import { secondFactorRequired } from '../../features/accounts/second-factor.ts';
import { accountByPassword } from '../../features/accounts/password-sign-in.ts';
import { startChallenge } from '../challenges.ts';
import { clockOf, type AdminDeps, type AdminState } from '../context.ts';
import { csrfProtection, formField } from '../csrf.ts';
import { admitLoginAttempt, loginThrottlePolicy, settleLoginAttempt } from '../login-throttle.ts';
import { checkLoginToken, loginToken, refuseInsideWait, stringField, throttleLines } from '../login-token.ts';
import { ADMIN_PATHS, loginUrl, safeNext } from '../paths.ts';
import { renderPage, seeOther } from '../render.ts';
import { endSession, requireSession, startSession } from '../sessions.ts';
import { loginPage } from '../views/login-page.ts';
import { pageContextOf } from '../views/page.ts';

export function mountLoginRoutes(router: Router<AdminState>, deps: AdminDeps): void {
  const now = clockOf(deps);
  const throttle = loginThrottlePolicy(deps.config.login);

  router.get(ADMIN_PATHS.login, (ctx) => {
    if (ctx.state.session) return seeOther(ctx, safeNext(ctx.query.next) ?? ADMIN_PATHS.home);
    const page = pageContextOf(ctx);
    renderPage(
      ctx,
      200,
      loginPage(page, { loginToken: loginToken(ctx, deps), next: safeNext(ctx.query.next) }),
    );
  });

  router.post(ADMIN_PATHS.login, async (ctx) => {
    const cookieToken = checkLoginToken(ctx, deps);
    const page = pageContextOf(ctx);
    const { t } = page;
    const next = safeNext(formField(ctx, 'next'));
    const emailInput = formField(ctx, 'email');
    const email = stringField(ctx, 'email', 320);
    const password = stringField(ctx, 'password', 1024);
    const show = (status: number, errors: string[]) =>
      renderPage(
        ctx,
        status,
        loginPage(page, {
          loginToken: cookieToken,
          email: typeof emailInput === 'string' ? emailInput.trim().slice(0, 320) : '',
          next,
          errors,
        }),
      );
    if (!email || !password) return show(422, [t('loginMissingFields')]);

    const at = now();
    const gate = await admitLoginAttempt(deps.db, throttle, { email, ip: ctx.ip, now: at });
    // Inside the wait: refused before the password is looked at.
    if (!gate.allowed) return show(429, [refuseInsideWait(ctx, t, gate.retryAt, at)]);

    const account = await accountByPassword(deps.db, email, password);
    await settleLoginAttempt(deps.db, throttle, {
      email,
      ip: ctx.ip,
      success: account !== undefined,
      now: at,
    });

    if (!account) return show(401, [t('loginFailed'), ...throttleLines(t, gate)]);

    // With two-step sign-in on, the password opens only the second step: no session yet.
    if (await secondFactorRequired(deps, account.id)) {
      await startChallenge(ctx, deps, account.id, next);
      return seeOther(ctx, ADMIN_PATHS.loginCode);
    }
    await startSession(ctx, deps, account.id);
    seeOther(ctx, next ?? ADMIN_PATHS.home);
  });

  router.post(ADMIN_PATHS.logout, requireSession(), csrfProtection(deps.config), async (ctx) => {
    await endSession(ctx, deps);
    seeOther(ctx, loginUrl({ message: 'signed_out' }));
  });
}
