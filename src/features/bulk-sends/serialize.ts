import { isoTime } from '../../domain/time.ts';
import type { BulkSend, BulkSendCounts, BulkSendRowView } from './bulk-send-store.ts';

/** The API's bulk send: its status, its counts (rows and their documents), and when a pause ends. */
export function serializeBulkSend(bulk: BulkSend, counts: BulkSendCounts) {
  return {
    id: bulk.id,
    template: { id: bulk.templateId, version: bulk.templateVersion },
    status: bulk.status,
    counts: {
      rows: counts.rows,
      invalid: counts.invalid,
      pending: counts.pending,
      created: counts.created,
      sent: counts.sent,
      failed: counts.failed,
      cancelled: counts.cancelled,
      approved: counts.approved,
      rejected: counts.rejected,
      expired: counts.expired,
    },
    resumes_at: bulk.status === 'paused_for_quota' ? isoTime(bulk.resumesAt) : null,
    created_at: isoTime(bulk.createdAt),
    updated_at: isoTime(bulk.updatedAt),
    cancelled_at: isoTime(bulk.cancelledAt),
    completed_at: isoTime(bulk.completedAt),
  };
}

export type SerializedBulkSend = ReturnType<typeof serializeBulkSend>;

export function serializeRow(row: BulkSendRowView) {
  return {
    row: row.number,
    status: row.status,
    document_id: row.documentId,
    document: row.documentId
      ? { id: row.documentId, reference: row.documentReference, status: row.documentStatus }
      : null,
    errors: row.errors,
  };
}
