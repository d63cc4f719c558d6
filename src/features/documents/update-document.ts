import type { Knex } from '../../db/knex.ts';
import { approversStore, type Approver } from './approvers-store.ts';
import { documentsStore, type Document, type DocumentPatch } from './documents-store.ts';
import { AppError } from '../../errors.ts';
import { ownsFile } from './file-keys.ts';
import type { DocumentFile, DocumentUpdate } from './inputs.ts';
import {
  ccWithoutApprovers,
  expiresAtFrom,
  placementDetails,
  placementProblem,
  REFUSALS,
  requireDraft,
} from './rules.ts';

/**
 * Changes a draft: the given fields, a new file, and (when given) the whole list of approvers. `expires_in_days`
 * counts from now. Returns the key of a replaced file, for the caller to remove once this has committed.
 */
export async function updateDocument(
  db: Knex,
  input: { accountId: string; id: string; update: DocumentUpdate; file?: DocumentFile; now?: Date },
): Promise<{ document: Document; approvers: Approver[]; replacedFileKey?: string }> {
  const now = input.now ?? new Date();
  const { update, file } = input;
  return db.transaction(async (trx) => {
    const documents = documentsStore(trx);
    const approvers = approversStore(trx);
    const current = await documents.findByIdForUpdate(input.accountId, input.id);
    if (!current) throw AppError.notFound('Document');
    requireDraft(current, REFUSALS.update);

    const pageCount = file?.pageCount ?? current.pageCount;
    if (update.approvers) {
      const details = placementDetails(update.approvers, pageCount);
      if (Object.keys(details).length) throw AppError.validation(details);
    } else if (file) {
      const misplaced = (await approvers.listByDocument(current.id)).filter((a) =>
        placementProblem(a.placement, pageCount),
      );
      if (misplaced.length) {
        throw AppError.validation({
          file: misplaced.map(
            (a) =>
              `The new PDF has ${pageCount} page${pageCount === 1 ? '' : 's'} but approver ${a.nameEn} is placed on page ${a.placement!.page}; change or clear that placement first, or send the approvers again with the file`,
          ),
        });
      }
    }

    // The document as it will stand: a cc number that is one of its approvers' is dropped.
    const cc =
      update.cc !== undefined || update.approvers !== undefined
        ? ccWithoutApprovers(
            update.cc ?? current.cc,
            update.approvers ?? (await approvers.listByDocument(current.id)),
          )
        : undefined;

    const patch: DocumentPatch = {
      titleAr: update.titleAr,
      titleEn: update.titleEn,
      department: update.department,
      workflowType: update.workflowType,
      ...(update.reminders !== undefined ? { reminders: update.reminders } : {}),
      ...(update.allowDelegation !== undefined ? { allowDelegation: update.allowDelegation } : {}),
      ...(cc !== undefined ? { cc } : {}),
      ...(update.expiresInDays !== undefined ? { expiresAt: expiresAtFrom(now, update.expiresInDays) } : {}),
      ...(file
        ? {
            fileKey: file.key,
            fileName: file.name,
            fileSize: file.size,
            fileSha256: file.sha256,
            pageCount: file.pageCount,
          }
        : {}),
    };
    const document = (await documents.update(input.accountId, input.id, patch))!;
    if (update.approvers) {
      await approvers.deleteByDocument(document.id);
      await approvers.insertMany(document, update.approvers);
    }
    return {
      document,
      approvers: await approvers.listByDocument(document.id),
      ...(file && file.key !== current.fileKey && ownsFile(current.fileKey)
        ? { replacedFileKey: current.fileKey }
        : {}),
    };
  });
}

/**
 * Deletes a draft and its approvers; returns the key of its file for the caller to remove after commit (none when
 * the file is a template's, shared with other documents).
 */
export async function deleteDocument(
  db: Knex,
  input: { accountId: string; id: string },
): Promise<{ fileKey: string | undefined }> {
  return db.transaction(async (trx) => {
    const documents = documentsStore(trx);
    const current = await documents.findByIdForUpdate(input.accountId, input.id);
    if (!current) throw AppError.notFound('Document');
    requireDraft(current, REFUSALS.delete);
    await documents.delete(input.accountId, input.id);
    return { fileKey: ownsFile(current.fileKey) ? current.fileKey : undefined };
  });
}
