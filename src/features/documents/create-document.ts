import type { Knex } from '../../db/knex.ts';
import { approversStore, type Approver } from './approvers-store.ts';
import { documentEventsStore, type DocumentEvent } from '../events/document-events-store.ts';
import { documentsStore, type Document } from './documents-store.ts';
import type { DocumentFile, DocumentInput } from './inputs.ts';
import { ccWithoutApprovers, expiresAtFrom } from './rules.ts';
import { serializeDocument } from './serialize.ts';

/**
 * Creates a draft in one transaction: its reference (counted per account and year), its approvers, and the
 * `document.created` event, so either all of it exists or none. The file is already in storage; on failure the
 * caller removes it. The event comes back for the caller to hand to webhook delivery after the commit.
 */
export async function createDocument(
  db: Knex,
  input: {
    id: string;
    accountId: string;
    fields: DocumentInput;
    file: DocumentFile;
    now?: Date;
    /** The template version it is made from (its file is that version's, shared: see `ownsFile`). */
    template?: { id: string; version: number };
  },
): Promise<{ document: Document; approvers: Approver[]; created: DocumentEvent }> {
  const now = input.now ?? new Date();
  return db.transaction(async (trx) => {
    const documents = documentsStore(trx);
    const reference = await documents.allocateReference(input.accountId, now.getUTCFullYear());
    const document = await documents.insert({
      id: input.id,
      accountId: input.accountId,
      reference,
      titleAr: input.fields.titleAr,
      titleEn: input.fields.titleEn,
      department: input.fields.department,
      workflowType: input.fields.workflowType,
      expiresAt: expiresAtFrom(now, input.fields.expiresInDays),
      fileKey: input.file.key,
      fileName: input.file.name,
      fileSha256: input.file.sha256,
      fileSize: input.file.size,
      pageCount: input.file.pageCount,
      reminders: input.fields.reminders,
      allowDelegation: input.fields.allowDelegation,
      cc: ccWithoutApprovers(input.fields.cc, input.fields.approvers),
      ...(input.template ? { template: input.template } : {}),
    });
    const approvers = await approversStore(trx).insertMany(document, input.fields.approvers);
    // No other transaction sees the row until this one commits: there is no recorder to take turns with.
    const created = await documentEventsStore(trx).record(
      {
        accountId: input.accountId,
        documentId: document.id,
        event: 'document.created',
        data: { document: serializeDocument(document, approvers) },
        dedupeKey: `document.created:${document.id}`,
      },
      { documentLocked: true },
    );
    return { document, approvers, created };
  });
}
