import type { Plan } from '../../domain/plans.ts';
import type { Db, Knex } from '../knex.ts';

/** A dashboard session with the account it belongs to. Only the SHA-256 of the cookie token is stored. */
export interface AdminSession {
  idHash: string;
  accountId: string;
  accountName: string;
  email: string;
  plan: Plan;
  csrfToken: string;
  createdAt: Date;
  lastSeenAt: Date;
  expiresAt: Date;
}

interface SessionRow {
  id_hash: string;
  account_id: string;
  csrf_token: string;
  created_at: Date;
  last_seen_at: Date;
  expires_at: Date;
  account_name: string;
  email: string;
  plan: Plan;
}

const toSession = (r: SessionRow): AdminSession => ({
  idHash: r.id_hash,
  accountId: r.account_id,
  accountName: r.account_name,
  email: r.email,
  plan: r.plan,
  csrfToken: r.csrf_token,
  createdAt: r.created_at,
  lastSeenAt: r.last_seen_at,
  expiresAt: r.expires_at,
});

export function adminSessionsStore(db: Db) {
  return {
    async create(input: {
      idHash: string;
      accountId: string;
      csrfToken: string;
      now: Date;
      expiresAt: Date;
    }): Promise<void> {
      await db('admin_sessions').insert({
        id_hash: input.idHash,
        account_id: input.accountId,
        csrf_token: input.csrfToken,
        created_at: input.now,
        last_seen_at: input.now,
        expires_at: input.expiresAt,
      });
    },

    async findByIdHash(idHash: string): Promise<AdminSession | undefined> {
      const row = await db('admin_sessions as s')
        .join('accounts as a', 'a.id', 's.account_id')
        .where('s.id_hash', idHash)
        .first<SessionRow | undefined>('s.*', 'a.name as account_name', 'a.email', 'a.plan');
      return row && toSession(row);
    },

    async touch(idHash: string, now: Date): Promise<void> {
      await db('admin_sessions').where({ id_hash: idHash }).update({ last_seen_at: now });
    },

    async delete(idHash: string): Promise<void> {
      await db('admin_sessions').where({ id_hash: idHash }).delete();
    },

    /** Ends every session of the account but `keepIdHash`; returns how many ended. */
    async deleteOthers(accountId: string, keepIdHash: string): Promise<number> {
      return db('admin_sessions').where({ account_id: accountId }).whereNot({ id_hash: keepIdHash }).delete();
    },

    /**
     * Deletes up to `limit` sessions past their absolute or idle expiry (of no use to anyone); returns how many
     * went. Rows another transaction holds are skipped, so several purgers never queue on each other.
     */
    async purgeExpired(now: Date, idleSince: Date, limit: number): Promise<number> {
      const expired = (q: Knex.QueryBuilder) =>
        q.where((w) => void w.where('expires_at', '<=', now).orWhere('last_seen_at', '<=', idleSince));
      return expired(
        db('admin_sessions').whereIn(
          'id_hash',
          expired(db('admin_sessions').select('id_hash')).limit(limit).forUpdate().skipLocked(),
        ),
      ).delete();
    },
  };
}

/** Failed sign-in counters, one row per bucket (`email:<address>`, `ip:<address>`). */
export interface LoginAttempts {
  bucket: string;
  failures: number;
  lockedUntil: Date | null;
  updatedAt: Date;
}

interface LoginAttemptsRow {
  bucket: string;
  failures: number;
  locked_until: Date | null;
  updated_at: Date;
}

export function loginAttemptsStore(db: Db) {
  return {
    /** The bucket's row, locked for the rest of the transaction (created empty when missing). */
    async getForUpdate(bucket: string, now: Date): Promise<LoginAttempts> {
      await db.raw(
        'INSERT INTO login_attempts (bucket, failures, updated_at) VALUES (?, 0, ?) ON CONFLICT (bucket) DO NOTHING',
        [bucket, now],
      );
      const row = await db<LoginAttemptsRow>('login_attempts').where({ bucket }).forUpdate().first();
      return {
        bucket,
        failures: row?.failures ?? 0,
        lockedUntil: row?.locked_until ?? null,
        updatedAt: row?.updated_at ?? now,
      };
    },

    async put(attempts: LoginAttempts): Promise<void> {
      await db('login_attempts').where({ bucket: attempts.bucket }).update({
        failures: attempts.failures,
        locked_until: attempts.lockedUntil,
        updated_at: attempts.updatedAt,
      });
    },

    async clear(bucket: string): Promise<void> {
      await db('login_attempts').where({ bucket }).delete();
    },

    /**
     * Deletes up to `limit` counters untouched since `before` (forgotten anyway: see the failure window) whose
     * wait, if any, is over; returns how many went. Rows in use by a sign-in are skipped.
     */
    async purgeStale(before: Date, now: Date, limit: number): Promise<number> {
      const stale = (q: Knex.QueryBuilder) =>
        q
          .where('updated_at', '<', before)
          .andWhere((w) => void w.whereNull('locked_until').orWhere('locked_until', '<=', now));
      return stale(
        db('login_attempts').whereIn(
          'bucket',
          stale(db('login_attempts').select('bucket')).limit(limit).forUpdate().skipLocked(),
        ),
      ).delete();
    },
  };
}
