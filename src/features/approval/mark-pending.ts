import type { SecretBox } from '../../auth/secret-box.ts';
import type { Knex } from '../../db/knex.ts';
import { approversStore, type Approver } from '../documents/approvers-store.ts';
import { documentsStore, type Document } from '../documents/documents-store.ts';

/**
 * The one write of draft → pending, by the send (src/features/approval/send-document.ts) or, when that send's
 * transaction never committed, by the workflow's first activity: the document is sent with this workflow, and
 * every approver's link exists from then on (GET /approvers/{id}/link reads it, never makes one). Undefined when
 * the document is no longer a draft. The caller holds the document's row lock, and read `approvers` under it.
 */
export async function markPending(
  trx: Knex.Transaction,
  secrets: SecretBox,
  documentId: string,
  workflowId: string,
  approvers: readonly Approver[],
): Promise<Document | undefined> {
  const sent = await documentsStore(trx).transition(documentId, ['draft'], 'pending', {
    sentAt: new Date(),
    workflowId,
  });
  if (sent) await approversStore(trx).issueLinkTokens(documentId, secrets, approvers);
  return sent;
}
