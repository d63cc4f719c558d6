import type { Db } from '../../db/knex.ts';
import { AppError } from '../../errors.ts';
import { accountsStore, type Account, type AccountSettingsPatch } from './accounts-store.ts';

export type { Account, AccountSettingsPatch };

/**
 * An account's own settings (embedding and the defaults of new documents and approvers), as every surface reads
 * and changes them. An account that no longer exists (deleted while its key was cached) is a not-found.
 */
export function accountSettings(db: Db) {
  const store = accountsStore(db);
  return {
    /** The account, or undefined when it no longer exists (a surface that shows defaults falls back to its own). */
    find(accountId: string): Promise<Account | undefined> {
      return store.findById(accountId);
    },

    async get(accountId: string): Promise<Account> {
      const account = await store.findById(accountId);
      if (!account) throw AppError.notFound('Account');
      return account;
    },

    /** Changes only what the patch gives; the same origin given twice is stored once. */
    async update(accountId: string, patch: AccountSettingsPatch): Promise<Account> {
      const account = await store.updateSettings(accountId, {
        ...patch,
        ...(patch.embedOrigins !== undefined && { embedOrigins: [...new Set(patch.embedOrigins)] }),
      });
      if (!account) throw AppError.notFound('Account');
      return account;
    },
  };
}
