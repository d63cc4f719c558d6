import { randomUUID } from 'node:crypto';
import type { SecretBox } from '../../auth/secret-box.ts';
import type { Knex } from '../../db/knex.ts';
import { approversStore } from './approvers-store.ts';
import { documentEventsStore, type DocumentEvent } from '../events/document-events-store.ts';
import { documentsStore, type Document } from './documents-store.ts';
import { AppError } from '../../errors.ts';
import { finalFilename, finalFileUrl } from './final-file.ts';
import { statusRefusal } from './rules.ts';
import { serializeDocument } from './serialize.ts';

export interface RotateDownloadDeps {
  db: Knex;
  secrets: SecretBox;
  publicBaseUrl: string;
}

/**
 * Replaces the permanent URL of an approved document's signed file (a URL that leaked): the file gets a new token,
 * the old URL answers 404 from the commit on, and `document.download_rotated` (with the new URL) is recorded in the
 * same transaction. The caller hands the event to webhook delivery once this returns. 404 for a document of another
 * account, 409 unless approved (naming the status), 503 if the file was never stored.
 */
export async function rotateDownload(
  deps: RotateDownloadDeps,
  accountId: string,
  documentId: string,
): Promise<{ document: Document; downloadUrl: string; event: DocumentEvent }> {
  return deps.db.transaction(async (trx) => {
    const current = await documentsStore(trx).findByIdForUpdate(accountId, documentId);
    if (!current) throw AppError.notFound('Document');
    if (current.status !== 'approved') {
      throw AppError.conflict(
        'not_approved',
        statusRefusal(current, 'only an approved document has a download URL to replace.'),
      );
    }
    const rotated = await documentsStore(trx).rotateFinalToken(accountId, documentId, deps.secrets);
    // Finalization stores the file before the document becomes approved, so this is only a safety net.
    if (!rotated)
      throw new AppError('service_unavailable', 'The signed PDF of this document is not available.');
    const { document, token } = rotated;
    const downloadUrl = finalFileUrl(deps.publicBaseUrl, token, document);
    const approvers = await approversStore(trx).listByDocument(document.id);
    const event = await documentEventsStore(trx).record(
      {
        accountId,
        documentId: document.id,
        event: 'document.download_rotated',
        data: {
          document: {
            ...serializeDocument(document, approvers),
            download_url: downloadUrl,
            filename: finalFilename(document),
          },
        },
        // Every rotation is an event of its own.
        dedupeKey: `document.download_rotated:${document.id}:${randomUUID()}`,
      },
      { documentLocked: true, secrets: deps.secrets },
    );
    return { document, downloadUrl, event };
  });
}
