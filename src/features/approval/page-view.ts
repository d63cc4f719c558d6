import type { Knex } from '../../db/knex.ts';
import { approversStore } from '../documents/approvers-store.ts';
import { documentEventsStore } from '../events/document-events-store.ts';
import { serializeApprover, serializeDocument } from '../documents/serialize.ts';
import type { WebhookDispatcher } from '../webhooks/dispatch.ts';
import type { PageLink } from './act-from-page.ts';
import { currentApprovers } from './rules.ts';

/** `approver.viewed`, once per approver (its dedupe key), handed to delivery after the commit. */
export async function recordPageView(
  deps: { db: Knex; webhooks?: Pick<WebhookDispatcher, 'dispatchRecorded'> },
  link: PageLink,
): Promise<void> {
  const approvers = await approversStore(deps.db).listByDocument(link.document.id);
  const approver = approvers.find((a) => a.id === link.approver.id) ?? link.approver;
  const viewed = await documentEventsStore(deps.db).record({
    accountId: link.document.accountId,
    documentId: link.document.id,
    approverId: approver.id,
    event: 'approver.viewed',
    data: { document: serializeDocument(link.document, approvers), approver: serializeApprover(approver) },
    dedupeKey: `approver.viewed:${approver.id}`,
  });
  await deps.webhooks?.dispatchRecorded([viewed]);
}

/** Whether the page offers delegation: the document allows it and it is this approver's turn. */
export async function canDelegateFromPage(db: Knex, link: PageLink): Promise<boolean> {
  if (!link.document.allowDelegation) return false;
  const approvers = await approversStore(db).listByDocument(link.document.id);
  return currentApprovers(link.document.workflowType, link.document.status, approvers, (a) => a.status).some(
    (a) => a.id === link.approver.id,
  );
}
