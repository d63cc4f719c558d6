import type { Knex } from '../../db/knex.ts';
import { approversStore, type Approver } from '../documents/approvers-store.ts';
import {
  whatsAppMessagesStore,
  type ApproverDeliveryStatus,
} from '../../db/stores/whatsapp-messages-store.ts';
import { isoTime } from '../../domain/time.ts';
import { serializeApprover, serializeFinalization } from '../documents/serialize.ts';
import { accountDocument } from './document-view.ts';
import { currentApprovers, progressOf } from './rules.ts';

/** What the approver's last WhatsApp notification did: the delivery status WhatsApp reported, else ours. */
function notificationOf(a: Approver, delivery: ApproverDeliveryStatus | undefined) {
  if (delivery) {
    // A message that never got through (still `pending`) whose notification exhausted its retry policy: failed.
    const gaveUp = delivery.status === 'pending' && a.notificationStatus === 'failed';
    return {
      status: gaveUp ? 'failed' : (delivery.status ?? a.notificationStatus),
      error: delivery.statusError ?? (a.notificationError ? { message: a.notificationError } : null),
      sent_at: isoTime(delivery.sentAt),
      updated_at: isoTime(delivery.statusAt),
    };
  }
  return a.notificationStatus
    ? {
        status: a.notificationStatus,
        error: a.notificationError ? { message: a.notificationError } : null,
        sent_at: null,
        updated_at: null,
      }
    : null;
}

/**
 * The approval status of one of the account's documents, read from PostgreSQL: status, progress, whose action
 * it waits for, and each approver with the delivery status of their last notification (request or reminder).
 */
export async function approvalStatus(db: Knex, accountId: string, documentId: string) {
  const document = await accountDocument(db, accountId, documentId);
  const approvers = await approversStore(db).listByDocument(document.id);
  const deliveries = await whatsAppMessagesStore(db).latestStatusForApprovers(
    approvers.map((a) => a.id),
    { kinds: ['approval_request', 'reminder'] },
  );
  return {
    id: document.id,
    reference: document.reference,
    status: document.status,
    workflow_type: document.workflowType,
    expires_at: isoTime(document.expiresAt),
    sent_at: isoTime(document.sentAt),
    completed_at: isoTime(document.completedAt),
    finalization: serializeFinalization(document),
    progress: progressOf(approvers),
    current_approver_ids: currentApprovers(
      document.workflowType,
      document.status,
      approvers,
      (a) => a.status,
    ).map((a) => a.id),
    approvers: approvers.map((a) => ({
      ...serializeApprover(a),
      notification: notificationOf(a, deliveries.get(a.id)),
    })),
  };
}
