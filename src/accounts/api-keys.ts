import { API_SCOPES, generateApiKey, type ApiScope } from '../auth/api-key-format.ts';
import type { Db } from '../db/knex.ts';
import { apiKeysStore, type ApiKey } from '../db/stores/api-keys-store.ts';

export interface IssuedApiKey {
  apiKey: ApiKey;
  /** Shown once; only its hash is stored. */
  secret: string;
}

export async function issueApiKey(
  db: Db,
  input: { accountId: string; name: string; scopes?: readonly ApiScope[] },
): Promise<IssuedApiKey> {
  const generated = generateApiKey();
  const apiKey = await apiKeysStore(db).create({
    accountId: input.accountId,
    name: input.name,
    key: generated.key,
    secretHash: generated.secretHash,
    scopes: input.scopes ?? API_SCOPES,
  });
  return { apiKey, secret: generated.secret };
}
