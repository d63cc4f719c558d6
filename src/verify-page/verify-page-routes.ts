import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import Router from '@koa/router';
import type { Config } from '../config.ts';
import type { Db } from '../db/knex.ts';
import type { Language } from '../domain/model.ts';
import { AppError } from '../errors.ts';
import { PAGE_CSS_ASSET, serveAssets, type PageAssets } from '../http/page-assets.ts';
import type { AppContext, AppState } from '../http/context.ts';
import { ok } from '../http/respond.ts';
import { postsOnlyAs } from '../http/cross-site-posts.ts';
import type { RateLimiter } from '../rate-limit/rate-limiter.ts';
import { classify, loadVerification, VERIFY_PREFIX } from './load-verification.ts';
import { renderNotFoundPage, renderRateLimitedPage, renderVerificationPage } from './render-page.ts';

const ASSET_FILES: PageAssets = {
  ...PAGE_CSS_ASSET,
  'verify.js': {
    path: () => fileURLToPath(new URL('./public/verify.js', import.meta.url)),
    type: 'text/javascript',
  },
  'verify.css': {
    path: () => fileURLToPath(new URL('./public/verify.css', import.meta.url)),
    type: 'text/css',
  },
};

/**
 * The public verification page: `GET /v/{token}` shows, in Arabic (right to left, the default)
 * or English (`?lang=`), what the signed document's audit certificate records, and checks whether a PDF is the
 * signed file by its SHA-256 (in the browser; `POST /v/{token}/check` when the browser cannot hash). No
 * authentication: the token, printed on the certificate with its QR code, is the key. Every request counts against
 * VERIFY_RATE_LIMIT_PER_MINUTE for the client's address.
 */
export function createVerifyPageRouter(deps: {
  db: Db;
  config: Pick<Config, 'verification'>;
  rateLimiter: RateLimiter;
}): Router<AppState> {
  const router = new Router<AppState>({ prefix: VERIFY_PREFIX });
  // The check's body is the file itself, as the page's script sends it; not JSON (it would have to be base64, a
  // third larger), but like JSON a type no other site's form can post (http/cross-site-posts.ts).
  router.use(
    postsOnlyAs(
      ['application/octet-stream', 'application/pdf'],
      'Send the file as the body, with Content-Type application/octet-stream or application/pdf',
    ),
  );
  const { requestsPerMinute, checkMaxBytes } = deps.config.verification;

  const language = (ctx: AppContext): Language => (ctx.query.lang === 'en' ? 'en' : 'ar');

  const pageHeaders = (ctx: AppContext) => {
    ctx.set('Cache-Control', 'no-store');
    // The token is in the path: never sent on to another site.
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.set('X-Frame-Options', 'DENY');
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set(
      'Content-Security-Policy',
      "default-src 'none'; img-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
    );
  };

  /** Counts the request for the client's address; true when it is over the limit (Retry-After is set). */
  const limited = async (ctx: AppContext): Promise<boolean> => {
    const result = await deps.rateLimiter.hit(`verify:${ctx.ip}`, requestsPerMinute);
    if (result.allowed) return false;
    ctx.set('Retry-After', String(Math.max(1, result.resetAt - Math.floor(Date.now() / 1000))));
    return true;
  };

  serveAssets(router, ASSET_FILES);

  router.get('/:token', async (ctx) => {
    pageHeaders(ctx);
    ctx.type = 'text/html';
    const lang = language(ctx);
    if (await limited(ctx)) {
      ctx.status = 429;
      ctx.body = renderRateLimitedPage(lang);
      return;
    }
    const view = await loadVerification(deps.db, ctx.params.token);
    if (!view) {
      ctx.status = 404;
      ctx.body = renderNotFoundPage(lang);
      return;
    }
    ctx.body = renderVerificationPage({ token: ctx.params.token!, lang, view, checkMaxBytes });
  });

  // The fallback of the page's check: the body is the file itself, hashed as it streams and never stored.
  router.post('/:token/check', async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.set('Referrer-Policy', 'no-referrer');
    if (await limited(ctx)) {
      throw new AppError(
        'rate_limited',
        `Rate limit exceeded: ${requestsPerMinute} requests per minute`,
        {},
        {
          'Retry-After': ctx.response.get('Retry-After'),
        },
      );
    }
    const view = await loadVerification(deps.db, ctx.params.token);
    if (!view) throw AppError.notFound('Document');
    const sha256 = await hashBody(ctx, checkMaxBytes);
    ok(ctx, { result: classify(view, sha256), sha256 });
  });

  return router;
}

async function hashBody(ctx: AppContext, limit: number): Promise<string> {
  const tooLarge = () =>
    new AppError(
      'payload_too_large',
      `The file is larger than ${Math.round((limit / 1048576) * 10) / 10} MB`,
    );
  const declared = Number(ctx.req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    ctx.set('Connection', 'close');
    throw tooLarge();
  }
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of ctx.req) {
    const buf = chunk as Buffer;
    size += buf.length;
    if (size > limit) {
      ctx.req.destroy();
      throw tooLarge();
    }
    hash.update(buf);
  }
  return hash.digest('hex');
}
