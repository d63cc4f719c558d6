import type Router from '@koa/router';
import {
  confirmEnrolment,
  disableSecondFactor,
  passwordMatches,
  secondFactorStatus,
  startEnrolment,
  verifySecondFactor,
} from '../../features/accounts/second-factor.ts';
import { clockOf, type AdminContext, type AdminDeps, type AdminState } from '../context.ts';
import { csrfProtection } from '../csrf.ts';
import {
  admitCodeAttempt,
  admitLoginAttempt,
  loginThrottlePolicy,
  settleCodeAttempt,
  settleLoginAttempt,
} from '../login-throttle.ts';
import { refuseInsideWait, stringField, throttleLines } from '../login-token.ts';
import { ADMIN_PATHS } from '../paths.ts';
import { renderPage, seeOther } from '../render.ts';
import { endOtherSessions, requireSession } from '../sessions.ts';
import { pageContextOf } from '../views/page.ts';
import { securityPage, type SecurityView } from '../views/security-page.ts';

/**
 * /admin/security: turn two-step sign-in on (a new secret, shown as a QR code and as text, in force only once a
 * first code from it is accepted; the recovery codes are shown in that answer only, and the account's other
 * sessions end) and off (with a current
 * code or the password, each throttled as at sign-in, so a stolen session cannot guess either).
 */
export function mountSecurityRoutes(router: Router<AdminState>, deps: AdminDeps): void {
  const now = clockOf(deps);
  const throttle = loginThrottlePolicy(deps.config.login);
  const guard = [requireSession(), csrfProtection(deps.config)] as const;

  const show = async (ctx: AdminContext, status: number, extra: Omit<SecurityView, 'status'> = {}) => {
    const session = ctx.state.session!;
    const status2fa = await secondFactorStatus(deps, { id: session.accountId, email: session.email });
    renderPage(ctx, status, securityPage(pageContextOf(ctx), { status: status2fa, ...extra }));
  };

  router.get(ADMIN_PATHS.security, requireSession(), (ctx) => show(ctx, 200));
  for (const path of [ADMIN_PATHS.totpStart, ADMIN_PATHS.totpConfirm, ADMIN_PATHS.totpDisable])
    router.get(path, (ctx) => seeOther(ctx, ADMIN_PATHS.security));

  // Starting again while one is in force changes nothing: it must be turned off first.
  router.post(ADMIN_PATHS.totpStart, ...guard, async (ctx) => {
    await startEnrolment(deps, ctx.state.session!.accountId, now());
    seeOther(ctx, ADMIN_PATHS.security);
  });

  router.post(ADMIN_PATHS.totpConfirm, ...guard, async (ctx) => {
    const code = stringField(ctx, 'code', 64) ?? '';
    const result = await confirmEnrolment(deps, ctx.state.session!.accountId, code, now());
    if (!result.ok && result.reason === 'no_enrolment') return seeOther(ctx, ADMIN_PATHS.security);
    if (!result.ok) return show(ctx, 422, { error: ctx.state.t('codeWrong') });
    // Sessions opened with the password alone (elsewhere, perhaps not by the holder) end now.
    await endOtherSessions(deps, ctx.state.session!);
    // The recovery codes exist in this answer only; the database keeps their hashes.
    await show(ctx, 200, { recoveryCodes: result.recoveryCodes });
  });

  router.post(ADMIN_PATHS.totpDisable, ...guard, async (ctx) => {
    const { t } = ctx.state;
    const session = ctx.state.session!;
    const code = stringField(ctx, 'code', 64);
    const password = stringField(ctx, 'password', 1024);
    if (!code && !password) return show(ctx, 422, { error: t('disableMissing') });

    const at = now();
    const ip = ctx.ip;
    let ok: boolean;
    let failure: string;
    let gate;
    if (code) {
      gate = await admitCodeAttempt(deps.db, throttle, { accountId: session.accountId, ip, now: at });
      if (!gate.allowed) return show(ctx, 429, { error: refuseInsideWait(ctx, t, gate.retryAt, at) });
      const result = await verifySecondFactor(deps, session.accountId, code, at);
      if (!result.ok && result.reason === 'not_enrolled') return seeOther(ctx, ADMIN_PATHS.security);
      ok = result.ok;
      failure = t(!result.ok && result.reason === 'replayed' ? 'codeReplayed' : 'codeWrong');
      await settleCodeAttempt(deps.db, throttle, { accountId: session.accountId, ip, success: ok, now: at });
    } else {
      gate = await admitLoginAttempt(deps.db, throttle, { email: session.email, ip, now: at });
      if (!gate.allowed) return show(ctx, 429, { error: refuseInsideWait(ctx, t, gate.retryAt, at) });
      ok = await passwordMatches(deps, session.accountId, password!);
      failure = t('passwordWrong');
      await settleLoginAttempt(deps.db, throttle, { email: session.email, ip, success: ok, now: at });
    }
    if (!ok) return show(ctx, 401, { error: [failure, ...throttleLines(t, gate)].join(' ') });

    await disableSecondFactor(deps, session.accountId);
    seeOther(ctx, `${ADMIN_PATHS.security}?m=second_factor_off`);
  });
}
