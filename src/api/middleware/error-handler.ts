import type { Middleware } from 'koa';
import { AppError, errorEnvelope, isAppError, type ErrorType } from '../../errors.ts';
import type { Logger } from '../../logger.ts';
import type { AppState } from '../../http/context.ts';
import { dependencyUnavailable } from '../../http/unavailable.ts';

const MESSAGES: Partial<Record<number, [ErrorType, string]>> = {
  400: ['bad_request', 'Bad request'],
  404: ['not_found', 'Not found'],
  405: ['method_not_allowed', 'Method not allowed'],
  413: ['payload_too_large', 'Request body too large'],
  415: ['unsupported_media_type', 'Unsupported media type'],
};

interface HttpLikeError {
  status?: number;
  statusCode?: number;
  expose?: boolean;
  type?: string;
}

/**
 * Turns what libraries throw (co-body, the router, Koa, the database and Temporal clients) into an AppError; a
 * dependency out of reach becomes a 503, anything else unknown a 500.
 */
function toAppError(err: unknown): AppError {
  if (isAppError(err)) return err;
  const e = (err ?? {}) as HttpLikeError;
  const status = e.status ?? e.statusCode;
  if (status && status >= 400 && status < 500 && e.expose !== false) {
    // co-body (under koa-body) refuses a JSON body with a "__proto__" key outright.
    if (status === 400 && err instanceof SyntaxError && /forbidden prototype property/.test(err.message))
      return new AppError('malformed_json', 'The JSON body has a "__proto__" key, which is not accepted');
    if (e.type === 'entity.parse.failed' || (status === 400 && err instanceof SyntaxError))
      return new AppError('malformed_json', 'Malformed JSON in request body');
    if (e.type === 'entity.too.large') return new AppError('payload_too_large', 'Request body too large');
    const known = MESSAGES[status];
    if (known) return new AppError(known[0], known[1]);
    return new AppError('bad_request', 'Bad request');
  }
  if (status === 501) return new AppError('not_implemented', 'Not implemented');
  // PostgreSQL or the Temporal server out of reach is a 503 the client can retry, not a bug.
  return dependencyUnavailable(err) ?? new AppError('internal_error', 'Internal server error');
}

/**
 * Seconds a 503 asks the client to wait when its cause named none: the OpenAPI document promises Retry-After on
 * every 503, and a client (or Meta, for the webhook) that honours it comes back instead of giving up.
 */
const UNAVAILABLE_RETRY_AFTER_SECONDS = '5';

/**
 * The top of the stack: every failure leaves as `{success:false, error:{code, message, details}}`.
 * 5xx messages never carry internals; the log has them, keyed by request id.
 */
export function errorHandler(logger: Logger): Middleware<AppState> {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        throw new AppError('not_found', `No route for ${ctx.method} ${ctx.path}`);
      }
    } catch (err) {
      const appError = toAppError(err);
      if (appError.status >= 500 && appError.code !== 'not_implemented') {
        // request_id (and document_id) come from the log context; path tokens are redacted by the logger.
        logger.error({ err, path: ctx.path }, 'request failed');
      }
      for (const [name, value] of Object.entries(appError.headers)) ctx.set(name, value);
      if (appError.status === 503 && !ctx.response.get('Retry-After'))
        ctx.set('Retry-After', UNAVAILABLE_RETRY_AFTER_SECONDS);
      ctx.status = appError.status;
      ctx.body = errorEnvelope(appError);
    }
  };
}
