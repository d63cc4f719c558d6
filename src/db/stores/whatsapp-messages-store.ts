import type { SecretBox } from '../../auth/secret-box.ts';
import type { Db } from '../knex.ts';
import { messagePayloadContext } from '../sealed-columns.ts';

/**
 * Outbound WhatsApp messages (the console outbox too), inbound replies (the replay dedupe), and the delivery
 * statuses Meta reports for each outbound message (evidence for the audit certificate).
 *
 * Outbound status moves only forward: sending/pending → accepted → sent → delivered → read, and `failed` beats
 * every other. Meta's notifications can arrive out of order (a `delivered` after a `read`) or twice; neither moves
 * a message backwards, and every status received is also kept in `whatsapp_message_statuses`.
 *
 * The outbox: `sending` is written (claimOutbound) and committed before the provider is called, so a retry finds
 * the message whatever happened after; `accepted` with the provider's id once recorded (recordOutbound); `pending`
 * or `failed` when the provider refused (recordSendFailure). An outbound message id is not unique: a provider that
 * repeats one still gets both messages recorded (migration 010).
 *
 * Payloads are kept sealed (migration 032): an approval request's buttons carry the approver's link token, a signed
 * copy the file's permanent URL, a button reply `approve:<token>`. They are bound to the message's idempotency key
 * (outbound) or message id (inbound), which are known before the upsert that writes them.
 */
export const OUTBOUND_STATUSES = [
  'sending',
  'pending',
  'accepted',
  'sent',
  'delivered',
  'read',
  'failed',
] as const;
export type OutboundStatus = (typeof OUTBOUND_STATUSES)[number];
export type ReportedStatus = Extract<OutboundStatus, 'sent' | 'delivered' | 'read' | 'failed'>;

/** What `status_error` holds: a refused send, or the first error of a `failed` status. */
export interface DeliveryError {
  message: string;
  code?: number;
  details?: string;
  retryable?: boolean;
  [extra: string]: unknown;
}

export interface WhatsAppMessage {
  id: number;
  wamid: string | null;
  direction: 'in' | 'out';
  accountId: string | null;
  documentId: string | null;
  approverId: string | null;
  phone: string;
  kind: string;
  /** `openPayload` reads it. */
  payloadSealed: string;
  status: OutboundStatus | null;
  statusAt: Date | null;
  statusError: DeliveryError | null;
  idempotencyKey: string | null;
  createdAt: Date;
}

/** The message's payload, opened. */
export function openPayload(message: WhatsAppMessage, secrets: SecretBox): unknown {
  return JSON.parse(secrets.open(message.payloadSealed, messagePayloadContext(message))) as unknown;
}

export interface StatusUpdate {
  wamid: string;
  status: ReportedStatus;
  timestamp: Date;
  recipient?: string;
  errors: { code?: number; title?: string; message?: string; details?: string }[];
}

export interface StatusEvent {
  wamid: string;
  status: ReportedStatus;
  statusAt: Date;
  recipient: string | null;
  errors: StatusUpdate['errors'] | null;
  receivedAt: Date;
}

export interface ApproverDeliveryStatus {
  approverId: string;
  messageId: number;
  wamid: string | null;
  kind: string;
  status: OutboundStatus | null;
  statusAt: Date | null;
  statusError: DeliveryError | null;
  sentAt: Date;
}

/** A reminder WhatsApp accepted: when it was first attempted, and whether the sender or the schedule sent it. */
export interface SentReminder {
  at: Date;
  kind: 'manual' | 'automatic' | 'expires_tomorrow';
}

export interface ReminderHistory {
  count: number;
  lastAt: Date | null;
  /** The database's time of the read. */
  now: Date;
}

/** An outbound message as the outbox records it, before and after the provider answers. */
export interface OutboundInput {
  idempotencyKey: string;
  accountId?: string | null;
  documentId?: string | null;
  approverId?: string | null;
  phone: string;
  kind: string;
  payload: unknown;
}

interface MessageRow {
  id: number;
  wamid: string | null;
  direction: 'in' | 'out';
  account_id: string | null;
  document_id: string | null;
  approver_id: string | null;
  phone: string;
  kind: string;
  payload_sealed: string;
  status: OutboundStatus | null;
  status_at: Date | null;
  status_error: DeliveryError | null;
  idempotency_key: string | null;
  created_at: Date;
}

interface StatusRow {
  wamid: string;
  status: ReportedStatus;
  status_at: Date;
  recipient: string | null;
  errors: StatusUpdate['errors'] | null;
  received_at: Date;
}

const toMessage = (r: MessageRow): WhatsAppMessage => ({
  id: r.id,
  wamid: r.wamid,
  direction: r.direction,
  accountId: r.account_id,
  documentId: r.document_id,
  approverId: r.approver_id,
  phone: r.phone,
  kind: r.kind,
  payloadSealed: r.payload_sealed,
  status: r.status,
  statusAt: r.status_at,
  statusError: r.status_error,
  idempotencyKey: r.idempotency_key,
  createdAt: r.created_at,
});

const toStatusEvent = (r: StatusRow): StatusEvent => ({
  wamid: r.wamid,
  status: r.status,
  statusAt: r.status_at,
  recipient: r.recipient,
  errors: r.errors,
  receivedAt: r.received_at,
});

/** The order a status may only move forward in, as SQL over a column (null ranks lowest). */
const rank = (column: string) =>
  `(CASE ${column} WHEN 'failed' THEN 5 WHEN 'read' THEN 4 WHEN 'delivered' THEN 3 WHEN 'sent' THEN 2
    WHEN 'accepted' THEN 1 WHEN 'pending' THEN 0 WHEN 'sending' THEN 0 ELSE -1 END)`;

// pg turns JS arrays into PostgreSQL arrays, so jsonb values are always passed as JSON text.
const json = (v: unknown) => JSON.stringify(v ?? null);

const sealOutbound = (secrets: SecretBox, input: OutboundInput) =>
  secrets.seal(
    json(input.payload),
    messagePayloadContext({ direction: 'out', idempotencyKey: input.idempotencyKey, wamid: null }),
  );

function statusErrorOf(update: StatusUpdate): DeliveryError | null {
  const first = update.errors[0];
  if (update.status !== 'failed' && !first) return null;
  return {
    message: first?.message ?? first?.title ?? 'Delivery failed',
    ...(first?.code !== undefined && { code: first.code }),
    ...(first?.details !== undefined && { details: first.details }),
    ...(update.errors.length > 1 && { errors: update.errors }),
  };
}

export function whatsAppMessagesStore(db: Db) {
  /** Returns the rows it moved. */
  async function applyRecordedStatuses(wamid: string): Promise<MessageRow[]> {
    // A status can arrive before the send call returned the id; fold in whatever is already recorded.
    const { rows } = await db.raw<{ rows: MessageRow[] }>(
      `UPDATE whatsapp_messages m
          SET status = s.status, status_at = s.status_at,
              status_error = CASE WHEN s.status = 'failed' THEN s.error ELSE m.status_error END
         FROM (SELECT status, status_at,
                      jsonb_build_object('message', COALESCE(errors->0->>'message', errors->0->>'title', 'Delivery failed'))
                        || COALESCE(jsonb_strip_nulls(jsonb_build_object('code', errors->0->'code', 'details', errors->0->'details')), '{}'::jsonb)
                        AS error
                 FROM whatsapp_message_statuses WHERE wamid = ?
                ORDER BY ${rank('status')} DESC LIMIT 1) s
        WHERE m.wamid = ? AND m.direction = 'out' AND ${rank('m.status')} < ${rank('s.status')}
        RETURNING m.*`,
      [wamid, wamid],
    );
    return rows;
  }

  const store = {
    async findByIdempotencyKey(key: string): Promise<WhatsAppMessage | undefined> {
      const row = await db<MessageRow>('whatsapp_messages').where({ idempotency_key: key }).first();
      return row && toMessage(row);
    },

    /** The first message with this id (an outbound id can repeat: see outboundSharingWamid). */
    async findByWamid(wamid: string): Promise<WhatsAppMessage | undefined> {
      const row = await db<MessageRow>('whatsapp_messages').where({ wamid }).orderBy('id').first();
      return row && toMessage(row);
    },

    /**
     * The outbox's first write, committed before the provider is called: the message's row, status `sending`,
     * keyed by its idempotency key. `claimed` is false when the key already holds a message id (an earlier or a
     * concurrent attempt sent it): send nothing, that row is returned. A row without an id (a refusal, or an
     * attempt whose answer is unknown) is claimed again and keeps its last error as evidence.
     */
    async claimOutbound(
      input: OutboundInput,
      secrets: SecretBox,
    ): Promise<{ message: WhatsAppMessage; claimed: boolean }> {
      const result = await db.raw<{ rows: MessageRow[] }>(
        `INSERT INTO whatsapp_messages
           (wamid, direction, account_id, document_id, approver_id, phone, kind, payload_sealed, status,
            status_at, idempotency_key)
         VALUES (NULL, 'out', ?, ?, ?, ?, ?, ?, 'sending', now(), ?)
         ON CONFLICT (idempotency_key) DO UPDATE
           SET payload_sealed = EXCLUDED.payload_sealed, status = 'sending', status_at = now()
           WHERE whatsapp_messages.wamid IS NULL
         RETURNING *`,
        [
          input.accountId ?? null,
          input.documentId ?? null,
          input.approverId ?? null,
          input.phone,
          input.kind,
          sealOutbound(secrets, input),
          input.idempotencyKey,
        ],
      );
      const claimed = result.rows[0];
      if (claimed) return { message: toMessage(claimed), claimed: true };
      return { message: (await store.findByIdempotencyKey(input.idempotencyKey))!, claimed: false };
    },

    /** The idempotency keys of the other outbound messages the provider gave this same id. */
    async outboundSharingWamid(wamid: string, idempotencyKey: string): Promise<string[]> {
      const rows = await db<MessageRow>('whatsapp_messages')
        .where({ wamid, direction: 'out' })
        .whereNot({ idempotency_key: idempotencyKey })
        .orderBy('id')
        .select('id', 'idempotency_key');
      return rows.map((r) => r.idempotency_key ?? `#${r.id}`);
    },

    /**
     * Records a message the provider accepted. Idempotent by key: when the key already holds a message id,
     * nothing changes and that earlier message is returned (compare its wamid with yours). The row claimed
     * before the send (or left by a failed attempt: no id yet) takes this id. The id may already be on another
     * outbound message (a provider that repeats ids): both are kept.
     */
    async recordOutbound(
      input: OutboundInput & { wamid: string },
      secrets: SecretBox,
    ): Promise<WhatsAppMessage> {
      const written = await db.raw<{ rows: MessageRow[] }>(
        `INSERT INTO whatsapp_messages
           (wamid, direction, account_id, document_id, approver_id, phone, kind, payload_sealed, status,
            status_at, idempotency_key)
         VALUES (?, 'out', ?, ?, ?, ?, ?, ?, 'accepted', now(), ?)
         ON CONFLICT (idempotency_key) DO UPDATE
           SET wamid = EXCLUDED.wamid, payload_sealed = EXCLUDED.payload_sealed, status = 'accepted',
               status_at = now(),
               status_error = NULL
           WHERE whatsapp_messages.wamid IS NULL
         RETURNING *`,
        [
          input.wamid,
          input.accountId ?? null,
          input.documentId ?? null,
          input.approverId ?? null,
          input.phone,
          input.kind,
          sealOutbound(secrets, input),
          input.idempotencyKey,
        ],
      );
      // No row back: the key already held an id, and that earlier message is the answer.
      const row =
        written.rows[0] ??
        (await db<MessageRow>('whatsapp_messages').where({ idempotency_key: input.idempotencyKey }).first())!;
      const moved = row.wamid ? await applyRecordedStatuses(row.wamid) : [];
      return toMessage(moved.find((m) => m.idempotency_key === input.idempotencyKey) ?? row);
    },

    /**
     * Records a send the provider refused, before the caller decides to retry: `pending` while a retry may
     * still succeed, `failed` when it cannot. Never overwrites a message that already has an id.
     */
    async recordSendFailure(
      input: OutboundInput & { error: DeliveryError },
      secrets: SecretBox,
    ): Promise<WhatsAppMessage> {
      const status: OutboundStatus = input.error.retryable ? 'pending' : 'failed';
      await db.raw(
        `INSERT INTO whatsapp_messages
           (wamid, direction, account_id, document_id, approver_id, phone, kind, payload_sealed, status,
            status_at, status_error, idempotency_key)
         VALUES (NULL, 'out', ?, ?, ?, ?, ?, ?, ?, now(), ?::jsonb, ?)
         ON CONFLICT (idempotency_key) DO UPDATE
           SET status = EXCLUDED.status, status_at = now(), status_error = EXCLUDED.status_error
           WHERE whatsapp_messages.wamid IS NULL`,
        [
          input.accountId ?? null,
          input.documentId ?? null,
          input.approverId ?? null,
          input.phone,
          input.kind,
          sealOutbound(secrets, input),
          status,
          json(input.error),
          input.idempotencyKey,
        ],
      );
      return (await store.findByIdempotencyKey(input.idempotencyKey))!;
    },

    /**
     * Records one delivery status from Meta. Returns the message it applies to (undefined when the message is
     * not known yet: the status is kept and applied when recordOutbound sees the id) and whether the
     * message's status moved. When the provider gave two outbound messages the same id, the status moves both
     * (it names only the id) and the first is returned.
     */
    async recordStatus(update: StatusUpdate): Promise<{ message?: WhatsAppMessage; changed: boolean }> {
      await db.raw(
        `INSERT INTO whatsapp_message_statuses (wamid, status, status_at, recipient, errors)
         VALUES (?, ?, ?, ?, ?::jsonb) ON CONFLICT (wamid, status) DO NOTHING`,
        [
          update.wamid,
          update.status,
          update.timestamp,
          update.recipient ?? null,
          update.errors.length > 0 ? json(update.errors) : null,
        ],
      );
      const error = statusErrorOf(update);
      const result = await db.raw<{ rows: MessageRow[] }>(
        `UPDATE whatsapp_messages
            SET status = ?, status_at = ?, status_error = CASE WHEN ? = 'failed' THEN ?::jsonb ELSE status_error END
          WHERE wamid = ? AND direction = 'out' AND ${rank('status')} < ${rank('?::text')}
          RETURNING *`,
        [update.status, update.timestamp, update.status, json(error), update.wamid, update.status],
      );
      const updated = result.rows[0];
      if (updated) return { message: toMessage(updated), changed: true };
      const row = await db<MessageRow>('whatsapp_messages')
        .where({ wamid: update.wamid, direction: 'out' })
        .orderBy('id')
        .first();
      return { ...(row && { message: toMessage(row) }), changed: false };
    },

    /** Every status Meta reported for one message, in the order they happened. */
    async statusHistory(wamid: string): Promise<StatusEvent[]> {
      const rows = await db<StatusRow>('whatsapp_message_statuses')
        .where({ wamid })
        .orderByRaw(`status_at, ${rank('status')}`);
      return rows.map(toStatusEvent);
    },

    /**
     * Records an inbound message id; true when it is to be handled: new, or recorded by a delivery whose handling
     * did not finish (`markInboundHandled` never ran: it failed half-way, or is still running). This is the replay
     * dedupe: Meta re-delivers a notification until it gets a 200, so the same id can come back, and only a
     * message handled to the end is a replay. The first delivery's row (phone, payload, ids) is kept.
     */
    async recordInbound(
      input: {
        wamid: string;
        phone: string;
        kind: string;
        payload: unknown;
        accountId?: string | null;
        documentId?: string | null;
        approverId?: string | null;
      },
      secrets: SecretBox,
    ): Promise<boolean> {
      const result = await db.raw<{ rows: { id: number }[] }>(
        `INSERT INTO whatsapp_messages
           (wamid, direction, account_id, document_id, approver_id, phone, kind, payload_sealed)
         VALUES (?, 'in', ?, ?, ?, ?, ?, ?)
         ON CONFLICT (wamid) WHERE direction = 'in'
           DO UPDATE SET wamid = EXCLUDED.wamid WHERE whatsapp_messages.handled_at IS NULL
         RETURNING id`,
        [
          input.wamid,
          input.accountId ?? null,
          input.documentId ?? null,
          input.approverId ?? null,
          input.phone,
          input.kind,
          secrets.seal(
            json(input.payload),
            messagePayloadContext({ direction: 'in', idempotencyKey: null, wamid: input.wamid }),
          ),
        ],
      );
      return result.rows.length > 0;
    },

    /** The inbound message's outcome is known and stored: a later delivery of its id is a replay. */
    async markInboundHandled(wamid: string): Promise<void> {
      await db('whatsapp_messages')
        .where({ wamid, direction: 'in' })
        .whereNull('handled_at')
        .update({ handled_at: db.fn.now() });
    },

    /** Outbound messages, newest first: the development inbox. */
    async listOutbox(
      options: { limit?: number; beforeId?: number; accountId?: string; phone?: string } = {},
    ): Promise<WhatsAppMessage[]> {
      const q = db<MessageRow>('whatsapp_messages')
        .where({ direction: 'out' })
        .orderBy('id', 'desc')
        .limit(Math.min(Math.max(options.limit ?? 50, 1), 500));
      if (options.beforeId !== undefined) void q.where('id', '<', options.beforeId);
      if (options.accountId) void q.where({ account_id: options.accountId });
      if (options.phone) void q.where({ phone: options.phone });
      return (await q).map(toMessage);
    },

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
      return (await store.latestStatusForApprovers([approverId], options)).get(approverId);
    },
  };
  return store;
}

export type WhatsAppMessagesStore = ReturnType<typeof whatsAppMessagesStore>;
