import type { ApiScope } from '../../auth/api-key-format.ts';
import type { Plan } from '../../domain/plans.ts';
import type { Db } from '../../db/knex.ts';

/** Where PostgreSQL announces a change to a key (its `key`) or to an account's plan (`account:<id>`); migration 017. */
export const API_KEYS_CHANNEL = 'wathiq_api_keys';

export interface ApiKey {
  id: string;
  accountId: string;
  name: string;
  key: string;
  scopes: ApiScope[];
  lastUsedAt: Date | null;
  revokedAt: Date | null;
  createdAt: Date;
}

/** What authentication needs in one read: the key, its hash, and the plan of its account. */
export interface ApiKeyWithAccount extends ApiKey {
  secretHash: string;
  plan: Plan;
}

interface ApiKeyRow {
  id: string;
  account_id: string;
  name: string;
  key: string;
  secret_hash: string;
  scopes: ApiScope[];
  last_used_at: Date | null;
  revoked_at: Date | null;
  created_at: Date;
}

const toApiKey = (r: ApiKeyRow): ApiKey => ({
  id: r.id,
  accountId: r.account_id,
  name: r.name,
  key: r.key,
  scopes: r.scopes,
  lastUsedAt: r.last_used_at,
  revokedAt: r.revoked_at,
  createdAt: r.created_at,
});

export function apiKeysStore(db: Db) {
  return {
    async create(input: {
      accountId: string;
      name: string;
      key: string;
      secretHash: string;
      scopes: readonly ApiScope[];
    }): Promise<ApiKey> {
      const [row] = await db<ApiKeyRow>('api_keys')
        .insert({
          account_id: input.accountId,
          name: input.name,
          key: input.key,
          secret_hash: input.secretHash,
          scopes: [...input.scopes],
        })
        .returning('*');
      return toApiKey(row!);
    },

    /** Holds the account's key creation until the transaction ends (a lock on the account id, not on a row). */
    async lockAccountKeys(accountId: string): Promise<void> {
      await db.raw("SELECT pg_advisory_xact_lock(hashtextextended('api_keys:' || ?, 0))", [accountId]);
    },

    async countActive(accountId: string): Promise<number> {
      const row = await db('api_keys')
        .where({ account_id: accountId })
        .whereNull('revoked_at')
        .count<{ n: string | number }>({ n: '*' })
        .first();
      return Number(row?.n ?? 0);
    },

    async findForAuthentication(key: string): Promise<ApiKeyWithAccount | undefined> {
      const row = await db('api_keys as k')
        .join('accounts as a', 'a.id', 'k.account_id')
        .where('k.key', key)
        .first<ApiKeyRow & { plan: Plan }>('k.*', 'a.plan');
      return row && { ...toApiKey(row), secretHash: row.secret_hash, plan: row.plan };
    },

    /** A key by its id, whichever account holds it: the operator names keys by id alone. */
    async findByIdUnscoped(id: string): Promise<ApiKey | undefined> {
      const row = await db<ApiKeyRow>('api_keys').where({ id }).first();
      return row && toApiKey(row);
    },

    async listByAccount(accountId: string): Promise<ApiKey[]> {
      const rows = await db<ApiKeyRow>('api_keys')
        .where({ account_id: accountId })
        .orderBy('created_at', 'desc');
      return rows.map(toApiKey);
    },

    /** Revokes a key of this account; false when the account has no such key. */
    async revoke(accountId: string, id: string): Promise<boolean> {
      const n = await db('api_keys')
        .where({ id, account_id: accountId })
        .whereNull('revoked_at')
        .update({ revoked_at: db.fn.now() });
      return n > 0;
    },

    /** Records use at most once a minute per key, so authentication does not write on every request. */
    async touchLastUsed(id: string): Promise<void> {
      await db('api_keys')
        .where({ id })
        .andWhere((q) => {
          void q.whereNull('last_used_at').orWhereRaw("last_used_at < now() - interval '1 minute'");
        })
        .update({ last_used_at: db.fn.now() });
    },
  };
}
