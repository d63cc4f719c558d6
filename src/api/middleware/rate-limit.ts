import type { Middleware } from 'koa';
import type { Config } from '../../config.ts';
import { AppError } from '../../errors.ts';
import type { RateLimiter } from '../../rate-limit/rate-limiter.ts';
import type { AppState } from '../../http/context.ts';

/** Per key, per minute, by the account's plan; runs after authentication. */
export function rateLimit(deps: { limiter: RateLimiter; plans: Config['plans'] }): Middleware<AppState> {
  return async (ctx, next) => {
    const auth = ctx.state.auth;
    if (!auth) {
      await next();
      return;
    }
    const limit = deps.plans[auth.plan].requestsPerMinute;
    const result = await deps.limiter.hit(`key:${auth.apiKeyId}`, limit);
    ctx.set('X-RateLimit-Limit', String(result.limit));
    ctx.set('X-RateLimit-Remaining', String(result.remaining));
    ctx.set('X-RateLimit-Reset', String(result.resetAt));
    if (!result.allowed) {
      const retryAfter = Math.max(1, result.resetAt - Math.floor(Date.now() / 1000));
      throw new AppError(
        'rate_limited',
        `Rate limit exceeded: ${limit} requests per minute for the ${auth.plan} plan`,
        {},
        { 'Retry-After': String(retryAfter) },
      );
    }
    await next();
  };
}
