import type { Middleware } from 'koa';
import type { Config } from '../../config.ts';
import { AppError } from '../../errors.ts';
import type { RateLimiter, RateLimitResult } from '../../rate-limit/rate-limiter.ts';
import type { AppState } from '../../http/context.ts';

/**
 * Per key and minute by the account's plan, and per account on top (the plan's limit times
 * RATE_LIMIT_ACCOUNT_MULTIPLIER, all its keys together), so more keys do not multiply an account's rate; runs after
 * authentication. Both counts live in the same store, so both hold across API processes with the postgres store.
 */
export function rateLimit(deps: {
  limiter: RateLimiter;
  plans: Config['plans'];
  fairShares: Pick<Config['fairShares'], 'accountRateMultiplier'>;
}): Middleware<AppState> {
  return async (ctx, next) => {
    const auth = ctx.state.auth;
    if (!auth) {
      await next();
      return;
    }
    const keyLimit = deps.plans[auth.plan].requestsPerMinute;
    const accountLimit = keyLimit * deps.fairShares.accountRateMultiplier;
    const key = await deps.limiter.hit(`key:${auth.apiKeyId}`, keyLimit);
    // Only requests the key let through spend the account's minute: an exhausted key cannot use up its siblings'.
    const account = key.allowed
      ? await deps.limiter.hit(`account:${auth.accountId}`, accountLimit)
      : undefined;
    // The headers describe whichever limit is closer: the one refusing, else the one with fewer requests left.
    const binding: RateLimitResult =
      account && (!account.allowed || account.remaining < key.remaining) ? account : key;
    ctx.set('X-RateLimit-Limit', String(binding.limit));
    ctx.set('X-RateLimit-Remaining', String(binding.remaining));
    ctx.set('X-RateLimit-Reset', String(binding.resetAt));
    if (!binding.allowed) {
      const retryAfter = Math.max(1, binding.resetAt - Math.floor(Date.now() / 1000));
      throw new AppError(
        'rate_limited',
        binding === key
          ? `Rate limit exceeded: ${keyLimit} requests per minute for the ${auth.plan} plan`
          : `Rate limit exceeded: ${accountLimit} requests per minute for this account, all its API keys together (${auth.plan} plan)`,
        {},
        { 'Retry-After': String(retryAfter) },
      );
    }
    await next();
  };
}
