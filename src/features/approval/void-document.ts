import { documentsStore } from '../documents/documents-store.ts';
import type { SerializedDocument } from '../documents/serialize.ts';
import { statusRefusal } from '../documents/rules.ts';
import { AppError } from '../../errors.ts';
import { ApprovalRefused, type ApprovalDeps } from './client.ts';
import { accountDocument, documentView } from './document-view.ts';
import { isOpen } from './rules.ts';

const VOID_RULE = 'only a pending or in-progress document can be voided';

/**
 * Voids a sent document (docs/product-rules.md §3–§4): `pending` or `in_progress` → `voided`, and the approvers
 * already notified are told. The workflow has the last word: a document whose approvers have all acted is being
 * finalized and can no longer be voided (409).
 */
export async function voidDocument(
  deps: ApprovalDeps,
  accountId: string,
  documentId: string,
): Promise<SerializedDocument> {
  const document = await accountDocument(deps.db, accountId, documentId);
  if (!isOpen(document.status))
    throw AppError.conflict('document_closed', statusRefusal(document, VOID_RULE));
  try {
    await deps.approvals.void(document.id);
  } catch (err) {
    if (!(err instanceof ApprovalRefused)) throw err;
    const now = (await documentsStore(deps.db).findByIdUnscoped(document.id)) ?? document;
    throw AppError.conflict(
      now.status === 'in_progress' ? 'document_finalizing' : 'document_closed',
      now.status === 'in_progress'
        ? 'Every approver has acted; the document is being finalized and can no longer be voided'
        : statusRefusal(now, VOID_RULE),
    );
  }
  return documentView(deps.db, document);
}
