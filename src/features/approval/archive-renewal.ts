import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import type { Knex } from '../../db/knex.ts';
import { archiveTimestampsStore, type DueArchiveTimestamp } from './archive-timestamps-store.ts';
import { finalFileKey } from '../documents/final-file.ts';
import type { Logger } from '../../logger.ts';
import type { ArchiveRenewalMetrics } from '../../metrics/metrics.ts';
import type { RevocationOptions } from '../../pdf/ltv/revocation.ts';
import { renewArchiveTimestamp } from '../../pdf/ltv/renew.ts';
import type { Storage } from '../../storage/storage.ts';
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
  /** wathiq_archive_renewals_total; absent where metrics are off. */
  metrics?: ArchiveRenewalMetrics;
}

export type { ArchiveRenewalInput, ArchiveRenewalResult };

/** Records that a document's final file is B-LTA and when its archive time-stamp's certificate expires. */
export async function recordArchiveTimestamp(db: Knex, documentId: string, expiresAt: Date): Promise<void> {
  await archiveTimestampsStore(db).record(documentId, expiresAt);
}

const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

/** The activity: renews every due file of this batch; one failure (logged, kept on the row) does not stop the rest. */
export function createArchiveRenewer(
  deps: ArchiveRenewalDeps,
): (input: ArchiveRenewalInput) => Promise<ArchiveRenewalResult> {
  return async ({ marginDays, batchSize }) => {
    if (!deps.tsaUrl) return { renewed: 0, failed: 0 }; // no time-stamp authority: nothing can be renewed
    const store = archiveTimestampsStore(deps.db);
    const due = await store.due(new Date(Date.now() + marginDays * 24 * 3600_000), batchSize);
    let renewed = 0;
    let failed = 0;
    for (const row of due) {
      try {
        await renewOne(deps, row);
        renewed += 1;
        deps.metrics?.renewal('renewed');
      } catch (err) {
        failed += 1;
        deps.metrics?.renewal('failed');
        deps.logger.error(
          { documentId: row.document_id, reference: row.reference, err },
          'archive time-stamp renewal failed; the next run tries again',
        );
        await store.failed(row.document_id, (err as Error).message);
      }
    }
    return { renewed, failed };
  };
}

async function renewOne(deps: ArchiveRenewalDeps, row: DueArchiveTimestamp): Promise<void> {
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
  const switched = await archiveTimestampsStore(deps.db).renewed(
    row.document_id,
    { key: row.final_file_key, sha256: row.final_sha256 },
    { key, sha256: newSha, expiresAt },
  );
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
