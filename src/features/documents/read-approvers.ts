import type { SecretBox } from '../../auth/secret-box.ts';
import type { Knex } from '../../db/knex.ts';
import type { ApproverStatus, DocumentStatus } from '../../domain/model.ts';
import { AppError } from '../../errors.ts';
import { isOpen } from '../approval/rules.ts';
import { approversStore, openLinkToken, type Approver } from './approvers-store.ts';
import { documentsStore, type Document } from './documents-store.ts';
import { requireDraft, statusRefusal } from './rules.ts';

/** The account's approver; 404 when the account has no such approver. */
export async function showApprover(db: Knex, accountId: string, id: string): Promise<Approver> {
  const approver = await approversStore(db).findById(accountId, id);
  if (!approver) throw AppError.notFound('Approver');
  return approver;
}

async function approverWithDocument(
  db: Knex,
  accountId: string,
  id: string,
): Promise<{ approver: Approver; document: Document }> {
  const approver = await showApprover(db, accountId, id);
  const document = await documentsStore(db).findById(accountId, approver.documentId);
  if (!document) throw AppError.notFound('Approver');
  return { approver, document };
}

/**
 * The account's approver if its document is a draft: 404 or 409 (with `refusal`) otherwise. A check before reading
 * the request's body; the change itself checks again under the document's lock.
 */
export async function requireChangeableApprover(
  db: Knex,
  accountId: string,
  id: string,
  refusal: string,
): Promise<Approver> {
  const { approver, document } = await approverWithDocument(db, accountId, id);
  requireDraft(document, refusal);
  return approver;
}

export interface ApproverLink {
  approver_id: string;
  url: string;
  usable_now: boolean;
  approver_status: ApproverStatus;
  document_status: DocumentStatus;
}

/** The approver's approval page URL. It reads the link and never makes one: 409 when there is none. */
export async function approverLink(
  deps: { db: Knex; secrets: SecretBox; publicBaseUrl: string },
  accountId: string,
  id: string,
): Promise<ApproverLink> {
  const { approver, document } = await approverWithDocument(deps.db, accountId, id);
  const open = isOpen(document.status);
  const token = openLinkToken(approver, deps.secrets);
  if (!token) {
    throw AppError.conflict(
      'link_not_issued',
      document.status === 'draft'
        ? 'The document has not been sent yet: links exist once it is sent'
        : open
          ? // Sent before links were issued at send: the link is made when the approver's turn comes.
            statusRefusal(document, 'this approver has no link yet; it is made when their turn comes')
          : statusRefusal(document, 'this approver never got a link'),
    );
  }
  return {
    approver_id: approver.id,
    url: `${deps.publicBaseUrl}/a/${token}`,
    usable_now: open && approver.status === 'notified',
    approver_status: approver.status,
    document_status: document.status,
  };
}
