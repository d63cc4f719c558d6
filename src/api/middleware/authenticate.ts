import type { Middleware } from 'koa';
import { hashApiSecret, parseBearerCredentials, type ApiScope } from '../../auth/api-key-format.ts';
import { constantTimeEqual } from '../../auth/tokens.ts';
import type { Db } from '../../db/knex.ts';
import type { ApiKeyLookup } from '../../features/accounts/api-key-cache.ts';
import { apiKeysStore } from '../../features/accounts/api-keys-store.ts';
import { AppError } from '../../errors.ts';
import type { Logger } from '../../logger.ts';
import type { AppState } from '../../http/context.ts';

const MALFORMED = 'Missing or malformed Authorization header: expected "Bearer <API_KEY>:<API_SECRET>"';
const INVALID = 'Invalid API key or secret';
// Compared against when the key is unknown, so unknown keys and wrong secrets take the same time.
const DUMMY_HASH = hashApiSecret('wathiq-dummy-secret-for-constant-time-compare');

/**
 * Authenticates `Authorization: Bearer KEY:SECRET`; every failure is a 401, never a 500. The key is found through
 * `apiKeys` (the API server's cache, which a change anywhere invalidates at once), the secret checked every time.
 */
export function authenticate(deps: { db: Db; logger: Logger; apiKeys: ApiKeyLookup }): Middleware<AppState> {
  // last_used_at has minute resolution: skip the write when this process recorded the key's use in the last
  // minute, so authentication costs one read per request instead of a read and a write.
  const touched = new Map<string, number>();
  const TOUCH_EVERY_MS = 60_000;
  const store = apiKeysStore(deps.db);
  return async (ctx, next) => {
    const credentials = parseBearerCredentials(ctx.get('authorization') || undefined);
    if (!credentials) throw new AppError('unauthorized', MALFORMED, {}, { 'WWW-Authenticate': 'Bearer' });

    const key = await deps.apiKeys.find(credentials.key);
    const secretMatches = constantTimeEqual(hashApiSecret(credentials.secret), key?.secretHash ?? DUMMY_HASH);
    if (!key || !secretMatches)
      throw new AppError('unauthorized', INVALID, {}, { 'WWW-Authenticate': 'Bearer' });
    if (key.revokedAt)
      throw new AppError(
        'unauthorized',
        'This API key has been revoked',
        {},
        { 'WWW-Authenticate': 'Bearer' },
      );

    ctx.state.auth = {
      accountId: key.accountId,
      apiKeyId: key.id,
      key: key.key,
      scopes: key.scopes,
      plan: key.plan,
    };
    const now = Date.now();
    if (now - (touched.get(key.id) ?? 0) >= TOUCH_EVERY_MS) {
      touched.set(key.id, now);
      if (touched.size > 10_000) touched.clear();
      store
        .touchLastUsed(key.id)
        .catch((err: unknown) => deps.logger.warn({ err }, 'could not record key use'));
    }
    await next();
  };
}

/** A loop, not `every` with a closure: a request that holds its scopes allocates nothing for the check. */
function holdsAll(held: readonly ApiScope[], scopes: readonly ApiScope[]): boolean {
  for (const scope of scopes) if (!held.includes(scope)) return false;
  return true;
}

/** 403 unless the key carries every one of `scopes` (docs/security.md, "Scopes"); the message names the missing. */
export function requireScopes(scopes: readonly ApiScope[]): Middleware<AppState> {
  return async (ctx, next) => {
    const held = ctx.state.auth?.scopes ?? [];
    if (!holdsAll(held, scopes)) {
      const missing = scopes.filter((s) => !held.includes(s));
      const names = missing.map((s) => `"${s}"`).join(' and ');
      throw new AppError(
        'forbidden',
        `This API key lacks the ${names} scope${missing.length > 1 ? 's' : ''}` +
          (scopes.length > 1 ? ` (this operation needs ${scopes.join(' and ')})` : ''),
      );
    }
    await next();
  };
}
