import Router from '@koa/router';
import type { Middleware } from 'koa';
import { koaBody } from 'koa-body';
import type { AppState } from '../http/context.ts';
import { allowedMethods } from '../http/methods.ts';
import type { Logger } from '../logger.ts';
import { sendAsset } from './assets.ts';
import { compose } from './compose.ts';
import type { AdminDeps, AdminState } from './context.ts';
import { AdminPageError } from './errors.ts';
import { DEFAULT_LOCALE, translator, type MessageKey } from './i18n.ts';
import { chooseLocale } from './locale.ts';
import { isAdminPath } from './paths.ts';
import { renderPage } from './render.ts';
import { mountBulkSendRoutes } from './routes/bulk-send-routes.ts';
import { mountCodeRoutes } from './routes/code-routes.ts';
import { mountKeyRoutes } from './routes/keys-routes.ts';
import { mountLoginRoutes } from './routes/login-routes.ts';
import { mountOverviewRoutes } from './routes/overview-routes.ts';
import { mountSecurityRoutes } from './routes/security-routes.ts';
import { securityHeaders } from './security-headers.ts';
import { loadSession } from './sessions.ts';
import { errorPage } from './views/error-page.ts';
import { pageContextOf } from './views/page.ts';

interface HttpLikeError {
  status?: number;
  statusCode?: number;
  expose?: boolean;
}

/** What a thrown error becomes on screen: a known client error, or a 500 that says nothing of internals. */
function classify(err: unknown): { status: number; key: MessageKey } {
  if (err instanceof AdminPageError) return { status: err.status, key: err.messageKey };
  const e = (err ?? {}) as HttpLikeError;
  const status = e.status ?? e.statusCode;
  // The router's 501 (a method it does not implement, TRACE included) is a refused method, not a failure.
  if (status === 405 || status === 501) return { status: 405, key: 'errorMethod' };
  if (status && status >= 400 && status < 500 && e.expose !== false) {
    if (status === 413) return { status, key: 'errorTooLarge' };
    if (status === 404) return { status, key: 'errorNotFound' };
    return { status: 400, key: 'errorBadRequest' };
  }
  return { status: 500, key: 'errorInternal' };
}

/** The dashboard's own error boundary: every failure under /admin is an HTML page, never the JSON envelope. */
function adminErrors(logger: Logger, router: Router<AdminState>): Middleware<AdminState> {
  return async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      const { status, key } = classify(err);
      if (status === 405) {
        const allow = allowedMethods([router], ctx.path);
        if (allow.length) ctx.set('Allow', allow.join(', '));
      }
      if (status >= 500) logger.error({ err, path: ctx.path }, 'dashboard request failed');
      ctx.state.locale ??= DEFAULT_LOCALE;
      ctx.state.t ??= translator(ctx.state.locale);
      const page = pageContextOf(ctx);
      renderPage(ctx, status, errorPage(page, status, page.t(key, { requestId: ctx.state.requestId })));
    }
  };
}

/** Wraps the routers: whatever they leave unanswered is the dashboard's own 404 page. */
const notFound: Middleware<AdminState> = async (ctx, next) => {
  await next();
  if (ctx.status === 404 && ctx.body === undefined) throw AdminPageError.notFound();
};

/**
 * The account holder's dashboard under /admin: sign-in, API keys, a read-only overview. Server-rendered HTML
 * in English and Arabic; sessions in PostgreSQL; every form CSRF-protected. Mount it before the API routers:
 * it answers every /admin path itself and passes everything else on untouched.
 */
export function createAdminDashboard(deps: AdminDeps): Middleware<AppState> {
  const router = new Router<AdminState>();
  mountLoginRoutes(router, deps);
  mountCodeRoutes(router, deps);
  mountKeyRoutes(router, deps);
  mountOverviewRoutes(router, deps);
  mountSecurityRoutes(router, deps);
  mountBulkSendRoutes(router, deps);

  const assets = new Router<AdminState>();
  assets.get('/admin/assets/:name', (ctx) => sendAsset(ctx, ctx.params.name ?? ''));

  const stack = compose<AdminState>([
    adminErrors(deps.logger, router),
    securityHeaders(),
    chooseLocale(deps),
    assets.routes() as Middleware<AdminState>,
    koaBody({ json: false, urlencoded: true, text: false, multipart: false, formLimit: '32kb' }),
    loadSession(deps),
    notFound,
    // allowedMethods acts on the way back out, after the routes have had their turn.
    router.allowedMethods({ throw: true }) as Middleware<AdminState>,
    router.routes() as Middleware<AdminState>,
  ]);

  return (ctx, next) => (isAdminPath(ctx.path) ? stack(ctx as Parameters<typeof stack>[0], next) : next());
}
