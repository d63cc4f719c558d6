import type { Plan } from '../../domain/plans.ts';
import type { ReminderSettings, Verification } from '../../domain/model.ts';
import type { Db } from '../../db/knex.ts';

export interface Account {
  id: string;
  name: string;
  email: string;
  plan: Plan;
  /** https origins allowed to frame the approval page (CSP frame-ancestors); empty: none. */
  embedOrigins: string[];
  /** Automatic reminders of documents sent without their own (migration 018); null: AUTO_REMIND_* applies. */
  defaultReminders: ReminderSettings | null;
  /** The verification of approvers created without their own (migration 019). */
  defaultVerification: Verification;
  createdAt: Date;
}

/** What PUT /account/settings and the dashboard change; undefined leaves a setting as it is. */
export interface AccountSettingsPatch {
  embedOrigins?: readonly string[];
  defaultReminders?: ReminderSettings | null;
  defaultVerification?: Verification;
}

interface AccountRow {
  id: string;
  name: string;
  email: string;
  plan: Plan;
  password_hash: string;
  embed_origins: string[];
  default_reminders: ReminderSettings | null;
  default_verification: Verification;
  created_at: Date;
}

const toAccount = (r: AccountRow): Account => ({
  id: r.id,
  name: r.name,
  email: r.email,
  plan: r.plan,
  embedOrigins: r.embed_origins ?? [],
  defaultReminders: r.default_reminders ?? null,
  defaultVerification: r.default_verification,
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
      return this.updateSettings(id, { embedOrigins: origins });
    },

    /** Changes the given settings in one statement; with none given, reads the account. */
    async updateSettings(id: string, patch: AccountSettingsPatch): Promise<Account | undefined> {
      const row: Partial<AccountRow> = {
        ...(patch.embedOrigins !== undefined && { embed_origins: [...patch.embedOrigins] }),
        ...(patch.defaultReminders !== undefined && { default_reminders: patch.defaultReminders }),
        ...(patch.defaultVerification !== undefined && { default_verification: patch.defaultVerification }),
      };
      if (Object.keys(row).length === 0) return this.findById(id);
      const [updated] = await db<AccountRow>('accounts').where({ id }).update(row).returning('*');
      return updated && toAccount(updated);
    },

    async findById(id: string): Promise<Account | undefined> {
      const row = await db<AccountRow>('accounts').where({ id }).first();
      return row && toAccount(row);
    },

    /** The account and its password hash, for sign-in only. */
    /** Accounts oldest first, `limit` of them after the `offset` first (the operator's `accounts list`). */
    async list(page: { limit: number; offset: number }): Promise<Account[]> {
      const rows = await db<AccountRow>('accounts')
        .orderBy([{ column: 'created_at' }, { column: 'id' }])
        .limit(page.limit)
        .offset(page.offset);
      return rows.map(toAccount);
    },

    async findCredentialsByEmail(
      email: string,
    ): Promise<{ account: Account; passwordHash: string } | undefined> {
      const row = await db<AccountRow>('accounts').whereRaw('lower(email) = lower(?)', [email]).first();
      return row && { account: toAccount(row), passwordHash: row.password_hash };
    },
  };
}
