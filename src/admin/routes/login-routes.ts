import type Router from '@koa/router';
import { verifyPassword, hashPassword } from '../../auth/passwords.ts';
import { constantTimeEqual, randomToken } from '../../auth/tokens.ts';
import { accountsStore } from '../../db/stores/accounts-store.ts';
import { clockOf, type AdminContext, type AdminDeps, type AdminState } from '../context.ts';
import { readCookie, setCookie } from '../cookies.ts';
import { CSRF_FIELD, csrfProtection, formField, isSameOriginRequest } from '../csrf.ts';
import { AdminPageError } from '../errors.ts';
import { admitLoginAttempt, loginThrottlePolicy, settleLoginAttempt } from '../login-throttle.ts';
import { ADMIN_PATHS, loginUrl, safeNext } from '../paths.ts';
import { renderPage, seeOther } from '../render.ts';
import { endSession, requireSession, startSession } from '../sessions.ts';
import { loginPage } from '../views/login-page.ts';
import { pageContextOf } from '../views/page.ts';

/** Before there is a session, the login form is protected by a double-submit token: cookie and hidden field. */
export const LOGIN_TOKEN_COOKIE = 'wathiq_admin_login';
const LOGIN_TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

// Unknown emails are checked against this hash, so they cost the same scrypt time as a real account.
let dummyHash: Promise<string> | undefined;
const dummyPasswordHash = () => (dummyHash ??= hashPassword(randomToken(16)));

function loginToken(ctx: AdminContext, deps: AdminDeps): string {
  const existing = readCookie(ctx, LOGIN_TOKEN_COOKIE);
  if (existing && LOGIN_TOKEN_PATTERN.test(existing)) return existing;
  const token = randomToken(32);
  setCookie(ctx, deps.config, LOGIN_TOKEN_COOKIE, token, { sameSite: 'Strict' });
  return token;
}

const waitSeconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

function stringField(ctx: AdminContext, name: string, max: number): string | undefined {
  const value = formField(ctx, name);
  if (typeof value !== 'string') return undefined;
  const trimmed = name === 'password' ? value : value.trim();
  return trimmed.length > 0 && trimmed.length <= max ? trimmed : undefined;
}

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
    const cookieToken = readCookie(ctx, LOGIN_TOKEN_COOKIE);
    const formToken = formField(ctx, CSRF_FIELD);
    if (
      !isSameOriginRequest(ctx, deps.config) ||
      !cookieToken ||
      typeof formToken !== 'string' ||
      !constantTimeEqual(formToken, cookieToken)
    )
      throw AdminPageError.csrf();

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
    if (!gate.allowed) {
      // Inside the wait: refused before the password is looked at.
      const seconds = waitSeconds(gate.retryAt.getTime() - at.getTime());
      ctx.set('Retry-After', String(seconds));
      return show(429, [t('loginWait', { seconds })]);
    }

    const credentials = await accountsStore(deps.db).findCredentialsByEmail(email);
    const matches = await verifyPassword(password, credentials?.passwordHash ?? (await dummyPasswordHash()));
    const success = matches && credentials !== undefined;
    await settleLoginAttempt(deps.db, throttle, { email, ip: ctx.ip, success, now: at });

    if (!credentials || !success) {
      const errors = [t('loginFailed')];
      if (gate.delayAfterFailureMs > 0)
        errors.push(t('loginWait', { seconds: waitSeconds(gate.delayAfterFailureMs) }));
      else if (gate.freeAttemptsLeft <= 2)
        errors.push(t('loginAttemptsLeft', { count: gate.freeAttemptsLeft }));
      return show(401, errors);
    }

    await startSession(ctx, deps, credentials.account.id);
    seeOther(ctx, next ?? ADMIN_PATHS.home);
  });

  router.post(ADMIN_PATHS.logout, requireSession(), csrfProtection(deps.config), async (ctx) => {
    await endSession(ctx, deps);
    seeOther(ctx, loginUrl({ message: 'signed_out' }));
  });
}
