import { createHash } from 'node:crypto';
import type { Middleware, Next } from 'koa';
import type { Db } from '../../db/knex.ts';
import type { SecretBox } from '../../auth/secret-box.ts';
import { idempotencyStore, openResponse } from '../../db/stores/idempotency-store.ts';
import { AppError, errorEnvelope, isAppError } from '../../errors.ts';
import type { Logger } from '../../logger.ts';
import type { AppContext, AppState, AuthContext } from '../../http/context.ts';

export const IDEMPOTENCY_TTL_SECONDS = 24 * 60 * 60;
/** A claim older than this whose request never finished (a crashed process) may be taken over. */
export const IDEMPOTENCY_STALE_SECONDS = 5 * 60;
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/** Thrown by `begin` when the key already holds a response; the middleware answers with it. */
class IdempotentReplay extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    super('idempotent replay');
  }
}

export interface IdempotencyHandle {
  readonly key: string;
  /**
   * Claims the key for this request, identified by `fingerprint`. Throws (and the middleware answers) when the
   * key already holds a response to replay (same fingerprint), was used for another request (422), or is held by
   * a request still in flight (409). Call it before any side effect.
   */
  begin(fingerprint: string): Promise<void>;
}

const handles = new WeakMap<AppContext, IdempotencyHandle>();

/**
 * The handle of a POST that carries an Idempotency-Key. JSON requests are claimed by the middleware itself;
 * a multipart handler, whose body is only known once streamed, calls `begin` with its own fingerprint.
 */
export function idempotencyOf(ctx: AppContext): IdempotencyHandle | undefined {
  return handles.get(ctx);
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === 'object')
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
    );
  return value;
}

/** SHA-256 over the method, the path and the body with its object keys sorted (key order is not meaning). */
export function requestFingerprint(method: string, path: string, body: unknown): string {
  return createHash('sha256')
    .update(JSON.stringify([method.toUpperCase(), path, canonical(body ?? null)]))
    .digest('hex');
}

function isJsonValue(body: unknown): boolean {
  return body === null || (typeof body === 'object' && !Buffer.isBuffer(body) && !('pipe' in body));
}

const MALFORMED_KEY = {
  'Idempotency-Key': ['Idempotency-Key must be 1 to 255 visible ASCII characters (a UUID is a good choice)'],
};

/**
 * `Idempotency-Key` on POST (docs/product-rules.md §8), per API key: the same key and the same request within 24
 * hours replays the stored status and body with `Idempotent-Replayed: true`; a different request is 422; a
 * duplicate arriving while the first is still running is 409. Successes and validation failures are stored;
 * anything else (403, 404, 409, 5xx) gives the key back, so a retry runs again.
 *
 * Mounted after authentication, this middleware only prepares the handle and answers for it. Nothing is claimed
 * or replayed until the route has checked the key's scope: `claimIdempotencyKey` (mounted by `route()` after the
 * scope check) claims a JSON request, and a multipart handler calls `begin` once its body is known. So a key
 * without the route's scope gets its 403, never a stored response, and another API key of the same account with
 * the same Idempotency-Key runs as a new request under its own record.
 */
export function idempotency(deps: IdempotencyDeps): Middleware<AppState> {
  const keyed = async (ctx: AppContext, next: Next, key: string, auth: AuthContext): Promise<void> => {
    const store = idempotencyStore(deps.db);
    let claimed: number | undefined;
    handles.set(ctx, {
      key,
      async begin(fingerprint) {
        if (claimed !== undefined) throw new Error('idempotency: begin called twice');
        const request = {
          accountId: auth.accountId,
          apiKeyId: auth.apiKeyId,
          method: ctx.method,
          path: ctx.path,
        };
        claimed = await claimKey(deps, store, { ...request, key, requestHash: fingerprint });
      },
    });

    try {
      await next();
    } catch (err) {
      if (err instanceof IdempotentReplay) {
        ctx.status = err.status;
        ctx.body = err.body;
        ctx.set('Idempotent-Replayed', 'true');
        return;
      }
      if (claimed !== undefined) await recordFailure(deps, store, claimed, err);
      throw err;
    }
    if (claimed !== undefined) await recordAnswer(deps, store, claimed, ctx);
  };
  // Any other request (every read) passes straight on, with no async frame and promise of its own.
  return (ctx, next) => {
    const key = ctx.get('idempotency-key');
    const auth = ctx.state.auth;
    return ctx.method !== 'POST' || !key || !auth ? next() : keyed(ctx, next, key, auth);
  };
}

interface IdempotencyDeps {
  db: Db;
  logger: Logger;
  secrets: SecretBox;
}
type IdempotencyStore = ReturnType<typeof idempotencyStore>;

/**
 * Claims the key and returns the claim's id; throws the stored answer to replay (same request), a 422 (another
 * request) or a 409 (the first is still running).
 */
async function claimKey(
  deps: IdempotencyDeps,
  store: IdempotencyStore,
  request: {
    accountId: string;
    apiKeyId: string;
    key: string;
    method: string;
    path: string;
    requestHash: string;
  },
): Promise<number> {
  if (!KEY_PATTERN.test(request.key)) throw AppError.validation(MALFORMED_KEY);
  if (Math.random() < 0.01) {
    store.purgeExpired().catch((err: unknown) => deps.logger.warn({ err }, 'idempotency purge failed'));
  }
  const result = await store.claim({
    ...request,
    ttlSeconds: IDEMPOTENCY_TTL_SECONDS,
    staleAfterSeconds: IDEMPOTENCY_STALE_SECONDS,
  });
  if (result.claimed) return result.id;
  const existing = result.existing;
  if (existing.requestHash !== request.requestHash) {
    throw new AppError('idempotency_key_reused', 'Validation failed', {
      'Idempotency-Key': [
        'This Idempotency-Key was already used for a different request; use a new key for a new request',
      ],
    });
  }
  if (existing.responseStatus === null) {
    throw AppError.conflict(
      'idempotency_key_in_flight',
      'A request with this Idempotency-Key is still in progress; retry once it has finished',
    );
  }
  throw new IdempotentReplay(existing.responseStatus, openResponse(existing, deps.secrets));
}

/** A validation failure is stored like an answer; any other failure gives the key back, so a retry runs again. */
async function recordFailure(
  deps: IdempotencyDeps,
  store: IdempotencyStore,
  claimed: number,
  err: unknown,
): Promise<void> {
  if (isAppError(err) && err.code === 'validation_failed') {
    await store.complete(claimed, err.status, errorEnvelope(err), deps.secrets);
  } else {
    await store.release(claimed).catch((e: unknown) => deps.logger.warn({ err: e }, 'idempotency release'));
  }
}

/** Stores a JSON success to replay, gives the key back for anything else. */
async function recordAnswer(
  deps: IdempotencyDeps,
  store: IdempotencyStore,
  claimed: number,
  ctx: AppContext,
): Promise<void> {
  // The work is done: a failure to record it must not turn the answer into an error.
  const record =
    ctx.status >= 200 && ctx.status < 300 && isJsonValue(ctx.body)
      ? store.complete(claimed, ctx.status, ctx.body ?? null, deps.secrets)
      : store.release(claimed);
  await record.catch((err: unknown) =>
    deps.logger.error({ err }, 'could not record the idempotent response'),
  );
}

/**
 * A route's own step, after its scope check: refuses a malformed Idempotency-Key and claims (or replays) a JSON
 * request's key. A multipart request is claimed by its handler, once the streamed body is known, with `begin`.
 */
export const claimIdempotencyKey: Middleware<AppState> = (ctx, next) => {
  const handle = idempotencyOf(ctx);
  return handle ? claim(ctx, next, handle) : next();
};

async function claim(ctx: AppContext, next: Next, handle: IdempotencyHandle): Promise<void> {
  if (!KEY_PATTERN.test(handle.key)) throw AppError.validation(MALFORMED_KEY);
  if (!ctx.is('multipart')) await handle.begin(requestFingerprint(ctx.method, ctx.path, ctx.request.body));
  await next();
}
