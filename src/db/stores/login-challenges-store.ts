import type { Db, Knex } from '../knex.ts';

/** A sign-in waiting for its second factor; only the SHA-256 of the browser's token is stored. */
export interface LoginChallenge {
  idHash: string;
  accountId: string;
  next: string | null;
  createdAt: Date;
  expiresAt: Date;
}

interface ChallengeRow {
  id_hash: string;
  account_id: string;
  next: string | null;
  created_at: Date;
  expires_at: Date;
}

const toChallenge = (r: ChallengeRow): LoginChallenge => ({
  idHash: r.id_hash,
  accountId: r.account_id,
  next: r.next,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
});

export function loginChallengesStore(db: Db) {
  return {
    /**
     * Records a challenge, keeping at most `keep` live ones per account (the newest): someone who knows the
     * password cannot pile up rows, and the holder's own latest sign-in always stays.
     */
    async create(challenge: LoginChallenge, keep: number): Promise<void> {
      await db('admin_login_challenges').insert({
        id_hash: challenge.idHash,
        account_id: challenge.accountId,
        next: challenge.next,
        created_at: challenge.createdAt,
        expires_at: challenge.expiresAt,
      });
      await db('admin_login_challenges')
        .where({ account_id: challenge.accountId })
        .andWhere(
          (w) =>
            void w.where('expires_at', '<=', challenge.createdAt).orWhereNotIn(
              'id_hash',
              db('admin_login_challenges')
                .select('id_hash')
                .where({ account_id: challenge.accountId })
                .orderBy([
                  { column: 'created_at', order: 'desc' },
                  { column: 'id_hash', order: 'desc' },
                ])
                .limit(keep),
            ),
        )
        .delete();
    },

    async find(idHash: string): Promise<LoginChallenge | undefined> {
      const row = await db<ChallengeRow>('admin_login_challenges').where({ id_hash: idHash }).first();
      return row && toChallenge(row);
    },

    /** Deletes the challenge; true for the one caller that deleted it (a second request with it gets false). */
    async take(idHash: string): Promise<boolean> {
      return (await db('admin_login_challenges').where({ id_hash: idHash }).delete()) === 1;
    },

    /** Deletes up to `limit` expired challenges; returns how many went. Rows in use are skipped. */
    async purgeExpired(now: Date, limit: number): Promise<number> {
      const expired = (q: Knex.QueryBuilder) => q.where('expires_at', '<=', now);
      return expired(
        db('admin_login_challenges').whereIn(
          'id_hash',
          expired(db('admin_login_challenges').select('id_hash')).limit(limit).forUpdate().skipLocked(),
        ),
      ).delete();
    },
  };
}
