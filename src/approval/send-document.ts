import { approversStore } from '../db/stores/approvers-store.ts';
import { LIMITS } from '../domain/model.ts';
import { isoTime } from '../domain/time.ts';
import type { SerializedDocument } from '../documents/serialize.ts';
import { statusRefusal } from '../documents/rules.ts';
import { AppError } from '../errors.ts';
import { ApprovalRefused, type ApprovalDeps } from './client.ts';
import { accountDocument, documentView } from './document-view.ts';

/**
 * Sends a draft for approval (docs/product-rules.md §3–§4). Preconditions: the document is a draft (409), has
 * 1 to 50 approvers (422) and its deadline is still ahead (409). Then the approval workflow starts with the
 * approvers as they are now, and the answer comes once the document reads `pending`.
 *
 * Two sends of one document race on the workflow id, which Temporal lets exist once (REJECT_DUPLICATE): the
 * second is refused with 409, so a document is never sent twice.
 */
export async function sendDocument(
  deps: ApprovalDeps,
  accountId: string,
  documentId: string,
): Promise<SerializedDocument> {
  const document = await accountDocument(deps.db, accountId, documentId);
  if (document.status !== 'draft')
    throw AppError.conflict(statusRefusal(document, 'only a draft can be sent'));
  const approvers = await approversStore(deps.db).listByDocument(document.id);
  if (approvers.length === 0) {
    throw AppError.validation({
      approvers: ['A document needs at least one approver before it can be sent'],
    });
  }
  if (approvers.length > LIMITS.approversMax) {
    throw AppError.validation({
      approvers: [`A document can have at most ${LIMITS.approversMax} approvers`],
    });
  }
  if (document.expiresAt.getTime() <= Date.now()) {
    throw AppError.conflict(
      `Document expired at ${isoTime(document.expiresAt)} before it was sent; renew it with PUT /documents/${document.id} and expires_in_days`,
    );
  }
  try {
    await deps.approvals.send(document, approvers);
  } catch (err) {
    if (err instanceof ApprovalRefused) throw AppError.conflict('Document has already been sent');
    throw err;
  }
  return documentView(deps.db, document);
}
