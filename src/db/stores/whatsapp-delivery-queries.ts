import type { Db } from '../knex.ts';
import type {
  ApproverDeliveryStatus,
  MessageRow,
  ReminderHistory,
  SentReminder,
} from './whatsapp-messages-rows.ts';

/**
 * What was sent to each approver and what became of it: the reads the approvers' delivery status, the reminder
 * rule and the audit certificate make over `whatsapp_messages`. Part of the WhatsApp messages store.
 */
export function approverDeliveryQueries(db: Db) {
  const queries = {
    /**
     * The reminders WhatsApp accepted (they have a message id) for each approver of a document, oldest first, for
     * the audit certificate. Which kind each was is in its idempotency key, made by the workflow:
     * `…:reminder:auto:N` automatic, `…:reminder:expires-tomorrow` the one before the deadline, `…:reminder:N` the
     * manual remind.
     */
    async sentRemindersByApprover(documentId: string): Promise<Map<string, SentReminder[]>> {
      const rows = await db<MessageRow>('whatsapp_messages')
        .where({ document_id: documentId, direction: 'out', kind: 'reminder' })
        .whereNotNull('wamid')
        .whereNotNull('approver_id')
        .orderBy('id', 'asc')
        .select('approver_id', 'idempotency_key', 'created_at');
      const out = new Map<string, SentReminder[]>();
      for (const r of rows) {
        const key = r.idempotency_key ?? '';
        const kind: SentReminder['kind'] = key.endsWith(':reminder:expires-tomorrow')
          ? 'expires_tomorrow'
          : /:reminder:auto:\d+$/.test(key)
            ? 'automatic'
            : 'manual';
        const list = out.get(r.approver_id!) ?? [];
        list.push({ at: r.created_at, kind });
        out.set(r.approver_id!, list);
      }
      return out;
    },

    /** The status of the latest outbound message to each approver (optionally of some kinds only). */
    async latestStatusForApprovers(
      approverIds: readonly string[],
      options: { kinds?: readonly string[] } = {},
    ): Promise<Map<string, ApproverDeliveryStatus>> {
      const out = new Map<string, ApproverDeliveryStatus>();
      if (approverIds.length === 0) return out;
      const q = db<MessageRow>('whatsapp_messages')
        .distinctOn('approver_id')
        .whereIn('approver_id', [...approverIds])
        .andWhere({ direction: 'out' })
        .orderBy([
          { column: 'approver_id', order: 'asc' },
          { column: 'id', order: 'desc' },
        ]);
      if (options.kinds) void q.whereIn('kind', [...options.kinds]);
      for (const r of await q) {
        out.set(r.approver_id!, {
          approverId: r.approver_id!,
          messageId: r.id,
          wamid: r.wamid,
          kind: r.kind,
          status: r.status,
          statusAt: r.status_at,
          statusError: r.status_error,
          sentAt: r.created_at,
        });
      }
      return out;
    },

    /**
     * The reminders recorded for one approver (outbound, kind `reminder`, whatever became of them) and when
     * the latest was first attempted, read with the database's clock so every API process agrees.
     */
    async reminderHistory(approverId: string): Promise<ReminderHistory> {
      const result = await db.raw<{ rows: { count: number; last_at: Date | null; now: Date }[] }>(
        `SELECT count(*)::int AS count, max(created_at) AS last_at, now() AS now
           FROM whatsapp_messages
          WHERE approver_id = ? AND direction = 'out' AND kind = 'reminder'`,
        [approverId],
      );
      const row = result.rows[0]!;
      return { count: row.count, lastAt: row.last_at, now: row.now };
    },

    async latestStatusForApprover(
      approverId: string,
      options: { kinds?: readonly string[] } = {},
    ): Promise<ApproverDeliveryStatus | undefined> {
      return (await queries.latestStatusForApprovers([approverId], options)).get(approverId);
    },
  };
  return queries;
}
