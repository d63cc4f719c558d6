import type { SecretBox } from '../../auth/secret-box.ts';
import type { Db } from '../knex.ts';
import { idempotentResponseContext } from '../sealed-columns.ts';

export interface IdempotencyRecord {
  id: number;
  accountId: string;
  apiKeyId: string;
  key: string;
  method: string;
  path: string;
  requestHash: string;
  /** Null while the first request is still being processed. */
  responseStatus: number | null;
  /** The response body, sealed (it may hold a new secret or URL); `openResponse` reads it. */
  responseSealed: string | null;
  createdAt: Date;
  expiresAt: Date;
}

interface IdempotencyRow {
  id: number;
  account_id: string;
  api_key_id: string;
  key: string;
  method: string;
  path: string;
  request_hash: string;
  response_status: number | null;
  response_sealed: string | null;
  created_at: Date;
  expires_at: Date;
}

const toRecord = (r: IdempotencyRow): IdempotencyRecord => ({
  id: Number(r.id),
  accountId: r.account_id,
  apiKeyId: r.api_key_id,
  key: r.key,
  method: r.method,
  path: r.path,
  requestHash: r.request_hash,
  responseStatus: r.response_status,
  responseSealed: r.response_sealed,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
});

/** The stored response body, opened. */
export function openResponse(record: IdempotencyRecord, secrets: SecretBox): unknown {
  return record.responseSealed === null
    ? null
    : (JSON.parse(secrets.open(record.responseSealed, idempotentResponseContext(record.id))) as unknown);
}

export type ClaimResult = { claimed: true; id: number } | { claimed: false; existing: IdempotencyRecord };

/**
 * Idempotency keys (docs/product-rules.md §8): one row per API key and Idempotency-Key (another key of the same
 * account never sees the row), holding the first response for 24 h.
 */
export function idempotencyStore(db: Db) {
  return {
    /**
     * Claims the key for a request, or returns the row that already holds it. A row whose time is up, or whose
     * request never finished within `staleAfterSeconds` (a crashed process), is taken over.
     */
    async claim(input: {
      accountId: string;
      apiKeyId: string;
      key: string;
      method: string;
      path: string;
      requestHash: string;
      ttlSeconds: number;
      staleAfterSeconds: number;
    }): Promise<ClaimResult> {
      const values = {
        method: input.method,
        path: input.path,
        request_hash: input.requestHash,
        expires_at: db.raw(`now() + make_interval(secs => ?)`, [input.ttlSeconds]),
      };
      for (let attempt = 0; ; attempt++) {
        const [inserted] = await db('idempotency_keys')
          .insert({ account_id: input.accountId, api_key_id: input.apiKeyId, key: input.key, ...values })
          .onConflict(['api_key_id', 'key'])
          .ignore()
          .returning<{ id: number }[]>('id');
        if (inserted) return { claimed: true, id: Number(inserted.id) };

        const [takenOver] = await db('idempotency_keys')
          .where({ api_key_id: input.apiKeyId, key: input.key })
          .andWhere((q) => {
            void q.where('expires_at', '<', db.fn.now()).orWhere((stale) => {
              void stale
                .whereNull('response_status')
                .andWhereRaw(`created_at < now() - make_interval(secs => ?)`, [input.staleAfterSeconds]);
            });
          })
          .update({ ...values, response_status: null, response_sealed: null, created_at: db.fn.now() })
          .returning<{ id: number }[]>('id');
        if (takenOver) return { claimed: true, id: Number(takenOver.id) };

        const existing = await db<IdempotencyRow>('idempotency_keys')
          .where({ api_key_id: input.apiKeyId, key: input.key })
          .first();
        if (existing) return { claimed: false, existing: toRecord(existing) };
        // Released between our statements: try again.
        if (attempt >= 3) throw new Error('idempotency key kept changing hands');
      }
    },

    /** Stores the response the key will replay, sealed. */
    async complete(id: number, status: number, body: unknown, secrets: SecretBox): Promise<void> {
      await db('idempotency_keys')
        .where({ id })
        .update({
          response_status: status,
          response_sealed: secrets.seal(JSON.stringify(body ?? null), idempotentResponseContext(id)),
        });
    },

    /** Gives the key back (the request failed in a way worth retrying). */
    async release(id: number): Promise<void> {
      await db('idempotency_keys').where({ id }).whereNull('response_status').delete();
    },

    async find(apiKeyId: string, key: string): Promise<IdempotencyRecord | undefined> {
      const row = await db<IdempotencyRow>('idempotency_keys').where({ api_key_id: apiKeyId, key }).first();
      return row && toRecord(row);
    },

    /**
     * Deletes up to `limit` expired rows; returns how many went. The outer condition is checked again on the
     * row as it is when deleted, so a key `claim` has just taken over (a fresh expiry) is left alone; rows
     * another transaction holds are skipped.
     */
    async purgeExpired(limit = 1000): Promise<number> {
      return db('idempotency_keys')
        .where('expires_at', '<', db.fn.now())
        .whereIn(
          'id',
          db('idempotency_keys')
            .select('id')
            .where('expires_at', '<', db.fn.now())
            .limit(limit)
            .forUpdate()
            .skipLocked(),
        )
        .delete();
    },
  };
}
