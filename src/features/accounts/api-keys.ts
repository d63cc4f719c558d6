import { API_SCOPES, generateApiKey, type ApiScope } from '../../auth/api-key-format.ts';
import type { Db } from '../../db/knex.ts';
import { apiKeysStore, type ApiKey } from './api-keys-store.ts';
import { AppError } from '../../errors.ts';
import { FAIR_SHARE_DEFAULTS } from '../../config/api-limits.ts';

export interface IssuedApiKey {
  apiKey: ApiKey;
  /** Shown once; only its hash is stored. */
  secret: string;
}

/** Why a key was refused for the account's key limit (422 on `keys`); the dashboard shows the same sentence. */
export const tooManyKeysMessage = (max: number): string =>
  `This account already has ${max} active API keys, the most it may have: revoke one it no longer uses, then create the new one.`;

/**
 * Issues a key unless the account already has `maxActive` active ones (API_KEYS_MAX_PER_ACCOUNT): limits are per
 * key, so more keys would otherwise mean more of everything. Keys of one account are issued one at a time (a
 * transaction-scoped lock), so two requests at once cannot both take the last place.
 */
export async function issueApiKey(
  db: Db,
  input: { accountId: string; name: string; scopes?: readonly ApiScope[]; maxActive?: number },
): Promise<IssuedApiKey> {
  const max = input.maxActive ?? FAIR_SHARE_DEFAULTS.maxActiveKeys;
  const generated = generateApiKey();
  const apiKey = await db.transaction(async (trx) => {
    const store = apiKeysStore(trx);
    await store.lockAccountKeys(input.accountId);
    if ((await store.countActive(input.accountId)) >= max) {
      throw AppError.validation({ keys: [tooManyKeysMessage(max)] });
    }
    return store.create({
      accountId: input.accountId,
      name: input.name,
      key: generated.key,
      secretHash: generated.secretHash,
      scopes: input.scopes ?? API_SCOPES,
    });
  });
  return { apiKey, secret: generated.secret };
}

/** The account's keys, newest first, revoked ones included (the dashboard shows when each was revoked). */
export async function listApiKeys(db: Db, accountId: string): Promise<ApiKey[]> {
  return apiKeysStore(db).listByAccount(accountId);
}

/**
 * Revokes one of the account's keys. A key of another account reads as one that does not exist; revoking twice
 * changes nothing and says so.
 */
export async function revokeApiKey(
  db: Db,
  input: { accountId: string; id: string },
): Promise<'revoked' | 'already_revoked' | 'not_found'> {
  const store = apiKeysStore(db);
  const key = (await store.listByAccount(input.accountId)).find((k) => k.id === input.id);
  if (!key) return 'not_found';
  if (key.revokedAt) return 'already_revoked';
  await store.revoke(input.accountId, input.id);
  return 'revoked';
}
