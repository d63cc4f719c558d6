import type { Middleware } from 'koa';
import { AppError } from '../errors.ts';
import type { AppState } from './context.ts';

/** The media type of a request without its parameters, in lower case; '' when none is given. */
export function mediaTypeOf(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase();
}

/**
 * The public pages' POSTs carry no credential but the token in their path (and a cookie), so another site could
 * make a visitor's browser send them: an HTML form can post `text/plain`, `application/x-www-form-urlencoded` or
 * `multipart/form-data` anywhere without asking. A body of any other type makes the browser ask the server first
 * (a CORS preflight), which we never answer with a yes. So each such POST takes only the media types its own
 * page's script sends, and anything else is 415 before the route reads the token, counts a rate limit or sends
 * anything.
 */
export function postsOnlyAs(types: readonly string[], message: string): Middleware<AppState> {
  return async (ctx, next) => {
    if (ctx.method === 'POST' && !types.includes(mediaTypeOf(ctx.get('content-type') || undefined)))
      throw new AppError('unsupported_media_type', message);
    await next();
  };
}
