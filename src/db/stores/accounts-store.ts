import type { Plan } from '../../config.ts';
import type { Db } from '../knex.ts';

export interface Account {
  id: string;
  name: string;
  email: string;
  plan: Plan;
  /** https origins allowed to frame the approval page (CSP frame-ancestors); empty: none. */
  embedOrigins: string[];
  createdAt: Date;
}

interface AccountRow {
  id: string;
  name: string;
  email: string;
  plan: Plan;
  password_hash: string;
  embed_origins: string[];
  created_at: Date;
}

const toAccount = (r: AccountRow): Account => ({
  id: r.id,
  name: r.name,
  email: r.email,
  plan: r.plan,
  embedOrigins: r.embed_origins ?? [],
  createdAt: r.created_at,
});

export function accountsStore(db: Db) {
  return {
    async create(input: { name: string; email: string; passwordHash: string; plan: Plan }): Promise<Account> {
      const [row] = await db<AccountRow>('accounts')
        .insert({ name: input.name, email: input.email, password_hash: input.passwordHash, plan: input.plan })
        .returning('*');
      return toAccount(row!);
    },

    async setEmbedOrigins(id: string, origins: readonly string[]): Promise<Account | undefined> {
      const [row] = await db<AccountRow>('accounts')
        .where({ id })
        .update({ embed_origins: [...origins] })
        .returning('*');
      return row && toAccount(row);
    },

    async findById(id: string): Promise<Account | undefined> {
      const row = await db<AccountRow>('accounts').where({ id }).first();
      return row && toAccount(row);
    },

    /** The account and its password hash, for sign-in only. */
    async findCredentialsByEmail(
      email: string,
    ): Promise<{ account: Account; passwordHash: string } | undefined> {
      const row = await db<AccountRow>('accounts').whereRaw('lower(email) = lower(?)', [email]).first();
      return row && { account: toAccount(row), passwordHash: row.password_hash };
    },
  };
}
