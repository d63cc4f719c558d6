import type { Db } from '../../db/knex.ts';

/** A final file whose archive time-stamp is due for renewal, with what renewing it needs of its document. */
export interface DueArchiveTimestamp {
  document_id: string;
  expires_at: Date;
  account_id: string;
  reference: string;
  final_file_key: string;
  final_sha256: string;
}

/**
 * The archive_timestamps table: for each B-LTA final file, when its last document time-stamp's certificate
 * expires, how often it was renewed and the last renewal's error.
 */
export function archiveTimestampsStore(db: Db) {
  return {
    /** Records (or moves) the expiry of a document's archive time-stamp. */
    async record(documentId: string, expiresAt: Date): Promise<void> {
      await db('archive_timestamps')
        .insert({ document_id: documentId, expires_at: expiresAt })
        .onConflict('document_id')
        .merge({ expires_at: expiresAt, updated_at: db.fn.now() });
    },

    /** The files whose time-stamp expires before `before`, soonest first, at most `limit`. */
    due(before: Date, limit: number): Promise<DueArchiveTimestamp[]> {
      return db('archive_timestamps as a')
        .join('documents as d', 'd.id', 'a.document_id')
        .whereNotNull('d.final_sha256')
        .whereNotNull('d.final_file_key')
        .where('a.expires_at', '<', before)
        .orderBy('a.expires_at')
        .limit(limit)
        .select<DueArchiveTimestamp[]>(
          'a.document_id',
          'a.expires_at',
          'd.account_id',
          'd.reference',
          'd.final_file_key',
          'd.final_sha256',
        );
    },

    /** A renewal failed: its error stays on the row (the next run tries again). */
    async failed(documentId: string, error: string): Promise<void> {
      await db('archive_timestamps')
        .where({ document_id: documentId })
        .update({ last_error: error.slice(0, 1000), updated_at: db.fn.now() });
    },

    /**
     * Points the document at its renewed file and records the renewal, in one transaction, only while the
     * document still names `from` (the file that was renewed): false when another run renewed it first.
     */
    renewed(
      documentId: string,
      from: { key: string; sha256: string },
      to: { key: string; sha256: string; expiresAt: Date },
    ): Promise<boolean> {
      return db.transaction(async (trx) => {
        const n = await trx('documents')
          .where({ id: documentId, final_sha256: from.sha256, final_file_key: from.key })
          .update({ final_file_key: to.key, final_sha256: to.sha256, updated_at: trx.fn.now() });
        if (n === 0) return false;
        await trx('archive_timestamps')
          .where({ document_id: documentId })
          .update({
            expires_at: to.expiresAt,
            renewals: trx.raw('renewals + 1'),
            renewed_at: trx.fn.now(),
            last_error: null,
            updated_at: trx.fn.now(),
          });
        return true;
      });
    },
  };
}
