import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import type { Knex } from '../db/knex.ts';
import { finalFileKey } from '../documents/final-file.ts';
import type { Logger } from '../logger.ts';
import type { RevocationOptions } from '../pdf/ltv/revocation.ts';
import { renewArchiveTimestamp } from '../pdf/ltv/renew.ts';
import type { Storage } from '../storage/storage.ts';
import type { ArchiveRenewalInput, ArchiveRenewalResult } from './workflow/archive-renewal-workflow.ts';

/**
 * Archive renewal (PAdES B-LTA): before the certificate of a final file's last document time-stamp expires, a fresh
 * document time-stamp is added over the file (after the old time-stamp's validation data), as an incremental
 * update. The renewed file is stored under a new key and the document row then points at it, in one update guarded
 * by the old SHA-256: the permanent URL (`/files/{token}/{reference}.pdf`) serves the newest file, a crash leaves
 * at worst an unreferenced file, and two renewals of one file cannot both win.
 */

export interface ArchiveRenewalDeps {
  db: Knex;
  storage: Storage;
  logger: Logger;
  tsaUrl?: string;
  revocation: RevocationOptions;
}

export type { ArchiveRenewalInput, ArchiveRenewalResult };

interface DueRow {
  document_id: string;
  expires_at: Date;
  account_id: string;
  reference: string;
  final_file_key: string;
  final_sha256: string;
}

/** Records that a document's final file is B-LTA and when its archive time-stamp's certificate expires. */
export async function recordArchiveTimestamp(db: Knex, documentId: string, expiresAt: Date): Promise<void> {
  await db('archive_timestamps')
    .insert({ document_id: documentId, expires_at: expiresAt })
    .onConflict('document_id')
    .merge({ expires_at: expiresAt, updated_at: db.fn.now() });
}

const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

/** The activity: renews every due file of this batch; one failure (logged, kept on the row) does not stop the rest. */
export function createArchiveRenewer(
  deps: ArchiveRenewalDeps,
): (input: ArchiveRenewalInput) => Promise<ArchiveRenewalResult> {
  return async ({ marginDays, batchSize }) => {
    if (!deps.tsaUrl) return { renewed: 0, failed: 0 }; // no time-stamp authority: nothing can be renewed
    const due = await deps
      .db('archive_timestamps as a')
      .join('documents as d', 'd.id', 'a.document_id')
      .whereNotNull('d.final_sha256')
      .whereNotNull('d.final_file_key')
      .where('a.expires_at', '<', new Date(Date.now() + marginDays * 24 * 3600_000))
      .orderBy('a.expires_at')
      .limit(batchSize)
      .select<DueRow[]>(
        'a.document_id',
        'a.expires_at',
        'd.account_id',
        'd.reference',
        'd.final_file_key',
        'd.final_sha256',
      );
    let renewed = 0;
    let failed = 0;
    for (const row of due) {
      try {
        await renewOne(deps, row);
        renewed += 1;
      } catch (err) {
        failed += 1;
        deps.logger.error(
          { documentId: row.document_id, reference: row.reference, err },
          'archive time-stamp renewal failed; the next run tries again',
        );
        await deps
          .db('archive_timestamps')
          .where({ document_id: row.document_id })
          .update({ last_error: (err as Error).message.slice(0, 1000), updated_at: deps.db.fn.now() });
      }
    }
    return { renewed, failed };
  };
}

async function renewOne(deps: ArchiveRenewalDeps, row: DueRow): Promise<void> {
  const stream = await deps.storage.get(row.final_file_key);
  if (!stream) throw new Error(`final file ${row.final_file_key} is missing`);
  const current = Buffer.concat(await stream.toArray());
  if (sha256(current) !== row.final_sha256)
    throw new Error(`final file ${row.final_file_key} does not match its SHA-256`);
  const { pdf, expiresAt } = await renewArchiveTimestamp(current, {
    tsaUrl: deps.tsaUrl!,
    revocation: deps.revocation,
  });
  const base = finalFileKey({ accountId: row.account_id, id: row.document_id, reference: row.reference });
  const key = base.replace(/\.pdf$/, `.archive-${Date.now()}.pdf`);
  const stored = await deps.storage.put(key, Readable.from([pdf]), { contentType: 'application/pdf' });
  const newSha = sha256(pdf);
  if (stored.sha256 !== newSha) throw new Error(`storage kept other bytes than were written under ${key}`);
  const switched = await deps.db.transaction(async (trx) => {
    const n = await trx('documents')
      .where({ id: row.document_id, final_sha256: row.final_sha256, final_file_key: row.final_file_key })
      .update({ final_file_key: key, final_sha256: newSha, updated_at: trx.fn.now() });
    if (n === 0) return false;
    await trx('archive_timestamps')
      .where({ document_id: row.document_id })
      .update({
        expires_at: expiresAt,
        renewals: trx.raw('renewals + 1'),
        renewed_at: trx.fn.now(),
        last_error: null,
        updated_at: trx.fn.now(),
      });
    return true;
  });
  if (!switched) {
    await deps.storage.delete(key); // another run renewed it first
    return;
  }
  // The row names the new file now; the previous one is no longer served.
  await deps.storage.delete(row.final_file_key).catch(() => undefined);
  deps.logger.info(
    { documentId: row.document_id, reference: row.reference, expiresAt: expiresAt.toISOString() },
    'archive time-stamp renewed',
  );
}
