import type { Db } from '../../db/knex.ts';

/** An account's TOTP enrolment. `secretSealed` is the secret box's output; only the feature opens it. */
export interface TotpEnrolment {
  accountId: string;
  secretSealed: string;
  createdAt: Date;
  /** Null while the enrolment waits for its first valid code: sign-in does not ask for codes yet. */
  confirmedAt: Date | null;
  /** The time step of the last code accepted (null: none yet). */
  lastStep: number | null;
}

interface TotpRow {
  account_id: string;
  secret_sealed: string;
  created_at: Date;
  confirmed_at: Date | null;
  last_step: string | number | null;
}

const toEnrolment = (r: TotpRow): TotpEnrolment => ({
  accountId: r.account_id,
  secretSealed: r.secret_sealed,
  createdAt: r.created_at,
  confirmedAt: r.confirmed_at,
  lastStep: r.last_step === null ? null : Number(r.last_step),
});

/** `account_totp` and `account_recovery_codes`: one account's second factor. */
export function secondFactorStore(db: Db) {
  return {
    async find(accountId: string): Promise<TotpEnrolment | undefined> {
      const row = await db<TotpRow>('account_totp').where({ account_id: accountId }).first();
      return row && toEnrolment(row);
    },

    /**
     * Starts (or restarts) an enrolment with a new sealed secret; refused (false) when one is already in force,
     * so a second factor is only replaced by disabling it first.
     */
    async putPending(accountId: string, secretSealed: string, now: Date): Promise<boolean> {
      const rows = await db.raw<{ rows: unknown[] }>(
        `INSERT INTO account_totp (account_id, secret_sealed, created_at) VALUES (?, ?, ?)
         ON CONFLICT (account_id) DO UPDATE SET secret_sealed = EXCLUDED.secret_sealed,
           created_at = EXCLUDED.created_at, last_step = NULL
         WHERE account_totp.confirmed_at IS NULL
         RETURNING account_id`,
        [accountId, secretSealed, now],
      );
      return rows.rows.length === 1;
    },

    /**
     * Puts the pending enrolment in force with the step of the code that confirmed it, and replaces the recovery
     * codes; false when there was no pending enrolment (already confirmed, or disabled meanwhile).
     */
    async confirm(input: {
      accountId: string;
      step: number;
      codeHashes: string[];
      now: Date;
    }): Promise<boolean> {
      const updated = await db('account_totp')
        .where({ account_id: input.accountId })
        .whereNull('confirmed_at')
        .update({ confirmed_at: input.now, last_step: input.step });
      if (updated !== 1) return false;
      await db('account_recovery_codes').where({ account_id: input.accountId }).delete();
      await db('account_recovery_codes').insert(
        input.codeHashes.map((h) => ({ account_id: input.accountId, code_hash: h, created_at: input.now })),
      );
      return true;
    },

    /**
     * Records `step` as used, only if it is later than every step used before: of two requests with the same
     * code, exactly one gets true.
     */
    async useStep(accountId: string, step: number): Promise<boolean> {
      const updated = await db('account_totp')
        .where({ account_id: accountId })
        .whereNotNull('confirmed_at')
        .andWhere((w) => void w.whereNull('last_step').orWhere('last_step', '<', step))
        .update({ last_step: step });
      return updated === 1;
    },

    /** Marks the recovery code used, once: true for the one request that used it. */
    async useRecoveryCode(accountId: string, codeHash: string, now: Date): Promise<boolean> {
      const updated = await db('account_recovery_codes')
        .where({ account_id: accountId, code_hash: codeHash })
        .whereNull('used_at')
        .update({ used_at: now });
      return updated === 1;
    },

    async unusedRecoveryCodes(accountId: string): Promise<number> {
      const row = await db('account_recovery_codes')
        .where({ account_id: accountId })
        .whereNull('used_at')
        .count<{ count: string }[]>('* as count')
        .first();
      return Number(row?.count ?? 0);
    },

    /** Removes the second factor and its recovery codes. */
    async remove(accountId: string): Promise<void> {
      await db('account_recovery_codes').where({ account_id: accountId }).delete();
      await db('account_totp').where({ account_id: accountId }).delete();
    },
  };
}
