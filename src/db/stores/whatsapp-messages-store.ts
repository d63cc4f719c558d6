import type { SecretBox } from '../../auth/secret-box.ts';
import { RATE_LIMIT_CODES } from '../../whatsapp/graph-errors.ts';
import type { Db } from '../knex.ts';
import { named } from '../prepared.ts';
import { messagePayloadContext } from '../sealed-columns.ts';
import { approverDeliveryQueries } from './whatsapp-delivery-queries.ts';
import {
  MESSAGE_COLUMNS,
  toMessage,
  toStatusEvent,
  type DeliveryError,
  type MessageRow,
  type OutboundInput,
  type OutboundStatus,
  type StatusEvent,
  type StatusRow,
  type StatusUpdate,
  type WhatsAppMessage,
} from './whatsapp-messages-rows.ts';

export {
  OUTBOUND_STATUSES,
  openPayload,
  type ApproverDeliveryStatus,
  type DeliveryError,
  type OutboundInput,
  type OutboundStatus,
  type ReminderHistory,
  type ReportedStatus,
  type SentReminder,
  type StatusEvent,
  type StatusUpdate,
  type WhatsAppMessage,
} from './whatsapp-messages-rows.ts';

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

/** An outbound row's account, document, approver, phone, kind and sealed payload: the values every outbound write binds. */
const outboundRow = (secrets: SecretBox, input: OutboundInput) => [
  input.accountId ?? null,
  input.documentId ?? null,
  input.approverId ?? null,
  input.phone,
  input.kind,
  sealOutbound(secrets, input),
];

/** The columns an outbound write returns, listed (never `*`: its statements are named). */
const RETURNED = MESSAGE_COLUMNS.join(', ');

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
export function whatsAppMessagesStore(db: Db) {
  return {
    findByIdempotencyKey: (key: string) => findByIdempotencyKey(db, key),
    findByWamid: (wamid: string) => findByWamid(db, wamid),
    claimOutbound: (input: OutboundInput, secrets: SecretBox) => claimOutbound(db, input, secrets),
    recordOutbound: (input: OutboundInput & { wamid: string }, secrets: SecretBox) =>
      recordOutbound(db, input, secrets),
    recordSendFailure: (input: OutboundInput & { error: DeliveryError }, secrets: SecretBox) =>
      recordSendFailure(db, input, secrets),
    lastRateLimitedAt: () => lastRateLimitedAt(db),
    recordStatus: (update: StatusUpdate) => recordStatus(db, update),
    statusHistory: (wamid: string) => statusHistory(db, wamid),
    recordInbound: (input: InboundInput, secrets: SecretBox) => recordInbound(db, input, secrets),
    markInboundHandled: (wamid: string) => markInboundHandled(db, wamid),
    listOutbox: (options?: OutboxQuery) => listOutbox(db, options),
    ...approverDeliveryQueries(db),
  };
}

export type WhatsAppMessagesStore = ReturnType<typeof whatsAppMessagesStore>;

interface InboundInput {
  wamid: string;
  phone: string;
  kind: string;
  payload: unknown;
  accountId?: string | null;
  documentId?: string | null;
  approverId?: string | null;
}

interface OutboxQuery {
  limit?: number;
  beforeId?: number;
  accountId?: string;
  phone?: string;
}

async function findByIdempotencyKey(db: Db, key: string): Promise<WhatsAppMessage | undefined> {
  const row = await db<MessageRow>('whatsapp_messages').where({ idempotency_key: key }).first();
  return row && toMessage(row);
}

/** The first message with this id (an outbound id can repeat: see outboundSharingWamid). */
async function findByWamid(db: Db, wamid: string): Promise<WhatsAppMessage | undefined> {
  const row = await db<MessageRow>('whatsapp_messages').where({ wamid }).orderBy('id').first();
  return row && toMessage(row);
}

/**
 * The outbox's first write, committed before the provider is called: the message's row, status `sending`,
 * keyed by its idempotency key. `claimed` is false when the key already holds a message id (an earlier or a
 * concurrent attempt sent it): send nothing, that row is returned. A row without an id (a refusal, or an
 * attempt whose answer is unknown) is claimed again and keeps its last error as evidence; `earlierStatus` is the
 * status it had before this claim (undefined for a new row), read in the same statement.
 */
async function claimOutbound(
  db: Db,
  input: OutboundInput,
  secrets: SecretBox,
): Promise<{ message: WhatsAppMessage; claimed: boolean; earlierStatus?: OutboundStatus | undefined }> {
  // The CTE reads the row as it was before the upsert: every part of one statement sees the same snapshot.
  const result = await db
    .raw<{ rows: (MessageRow & { earlier_status: OutboundStatus | null })[] }>(
      `WITH earlier AS (SELECT status FROM whatsapp_messages WHERE idempotency_key = ?)
     INSERT INTO whatsapp_messages
       (wamid, direction, account_id, document_id, approver_id, phone, kind, payload_sealed, status,
        status_at, idempotency_key)
     VALUES (NULL, 'out', ?, ?, ?, ?, ?, ?, 'sending', now(), ?)
     ON CONFLICT (idempotency_key) DO UPDATE
       SET payload_sealed = EXCLUDED.payload_sealed, status = 'sending', status_at = now()
       WHERE whatsapp_messages.wamid IS NULL
     RETURNING ${RETURNED}, (SELECT status FROM earlier) AS earlier_status`,
      [input.idempotencyKey, ...outboundRow(secrets, input), input.idempotencyKey],
    )
    .options(named('whatsapp_outbound_claim'));
  const claimed = result.rows[0];
  if (claimed)
    return { message: toMessage(claimed), claimed: true, earlierStatus: claimed.earlier_status ?? undefined };
  return { message: (await findByIdempotencyKey(db, input.idempotencyKey))!, claimed: false };
}

/**
 * Records a message the provider accepted. Idempotent by key: when the key already holds a message id,
 * nothing changes and that earlier message is returned (compare its wamid with yours). The row claimed
 * before the send (or left by a failed attempt: no id yet) takes this id. The id may already be on another
 * outbound message (a provider that repeats ids): both are kept, and `sharedWith` names the others' idempotency
 * keys (read in the same statement; empty when this call wrote nothing).
 */
async function recordOutbound(
  db: Db,
  input: OutboundInput & { wamid: string },
  secrets: SecretBox,
): Promise<WhatsAppMessage & { sharedWith: string[] }> {
  const written = await db
    .raw<{ rows: (MessageRow & { shared_with: string[] })[] }>(
      `WITH written AS (
     INSERT INTO whatsapp_messages
       (wamid, direction, account_id, document_id, approver_id, phone, kind, payload_sealed, status,
        status_at, idempotency_key)
     VALUES (?, 'out', ?, ?, ?, ?, ?, ?, 'accepted', now(), ?)
     ON CONFLICT (idempotency_key) DO UPDATE
       SET wamid = EXCLUDED.wamid, payload_sealed = EXCLUDED.payload_sealed, status = 'accepted',
           status_at = now(),
           status_error = NULL
       WHERE whatsapp_messages.wamid IS NULL
     RETURNING ${RETURNED})
     SELECT w.*,
            ARRAY(SELECT COALESCE(m.idempotency_key, '#' || m.id) FROM whatsapp_messages m
                   WHERE m.wamid = w.wamid AND m.direction = 'out' AND m.idempotency_key <> w.idempotency_key
                   ORDER BY m.id) AS shared_with
       FROM written w`,
      [input.wamid, ...outboundRow(secrets, input), input.idempotencyKey],
    )
    .options(named('whatsapp_outbound_record'));
  // No row back: the key already held an id, and that earlier message is the answer.
  const sharedWith = written.rows[0]?.shared_with ?? [];
  const row =
    written.rows[0] ??
    (await db<MessageRow>('whatsapp_messages').where({ idempotency_key: input.idempotencyKey }).first())!;
  const moved = row.wamid ? await applyRecordedStatuses(db, row.wamid) : [];
  return { ...toMessage(moved.find((m) => m.idempotency_key === input.idempotencyKey) ?? row), sharedWith };
}

/**
 * Records a send the provider refused, before the caller decides to retry: `pending` while a retry may
 * still succeed, `failed` when it cannot. Never overwrites a message that already has an id.
 */
async function recordSendFailure(
  db: Db,
  input: OutboundInput & { error: DeliveryError },
  secrets: SecretBox,
): Promise<WhatsAppMessage> {
  const status: OutboundStatus = input.error.retryable ? 'pending' : 'failed';
  const rateLimited = input.error.code !== undefined && RATE_LIMIT_CODES.includes(input.error.code);
  await db.raw(
    `INSERT INTO whatsapp_messages
       (wamid, direction, account_id, document_id, approver_id, phone, kind, payload_sealed, status,
        status_at, status_error, rate_limited_at, idempotency_key)
     VALUES (NULL, 'out', ?, ?, ?, ?, ?, ?, ?, now(), ?::jsonb, CASE WHEN ? THEN now() END, ?)
     ON CONFLICT (idempotency_key) DO UPDATE
       SET status = EXCLUDED.status, status_at = now(), status_error = EXCLUDED.status_error,
           rate_limited_at = coalesce(EXCLUDED.rate_limited_at, whatsapp_messages.rate_limited_at)
       WHERE whatsapp_messages.wamid IS NULL`,
    [...outboundRow(secrets, input), status, json(input.error), rateLimited, input.idempotencyKey],
  );
  return (await findByIdempotencyKey(db, input.idempotencyKey))!;
}

/**
 * When Meta last refused one of our sends for a rate limit (any message, however it ended): the mark stays when a
 * retry is later accepted, so a pace that checks every second still sees a refusal retried within that second.
 * PostgreSQL's text of the time, to the microsecond: a Date would cut it to the millisecond, and a refusal made in
 * the same millisecond after the pace last changed would then look older than the change.
 */
async function lastRateLimitedAt(db: Db): Promise<string | null> {
  const { rows } = await db.raw<{ rows: { at: string | null }[] }>(
    'SELECT max(rate_limited_at)::text AS at FROM whatsapp_messages WHERE rate_limited_at IS NOT NULL',
  );
  return rows[0]?.at ?? null;
}

/**
 * Records one delivery status from Meta. Returns the message it applies to (undefined when the message is
 * not known yet: the status is kept and applied when recordOutbound sees the id) and whether the
 * message's status moved. When the provider gave two outbound messages the same id, the status moves both
 * (it names only the id) and the first is returned.
 */
async function recordStatus(
  db: Db,
  update: StatusUpdate,
): Promise<{ message?: WhatsAppMessage; changed: boolean }> {
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
}

/** Every status Meta reported for one message, in the order they happened. */
async function statusHistory(db: Db, wamid: string): Promise<StatusEvent[]> {
  const rows = await db<StatusRow>('whatsapp_message_statuses')
    .where({ wamid })
    .orderByRaw(`status_at, ${rank('status')}`);
  return rows.map(toStatusEvent);
}

/**
 * Records an inbound message id; true when it is to be handled: new, or recorded by a delivery whose handling
 * did not finish (`markInboundHandled` never ran: it failed half-way, or is still running). This is the replay
 * dedupe: Meta re-delivers a notification until it gets a 200, so the same id can come back, and only a
 * message handled to the end is a replay. The first delivery's row (phone, payload, ids) is kept.
 */
async function recordInbound(db: Db, input: InboundInput, secrets: SecretBox): Promise<boolean> {
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
}

/** The inbound message's outcome is known and stored: a later delivery of its id is a replay. */
async function markInboundHandled(db: Db, wamid: string): Promise<void> {
  await db('whatsapp_messages')
    .where({ wamid, direction: 'in' })
    .whereNull('handled_at')
    .update({ handled_at: db.fn.now() });
}

/** Outbound messages, newest first: the development inbox. */
async function listOutbox(db: Db, options: OutboxQuery = {}): Promise<WhatsAppMessage[]> {
  const q = db<MessageRow>('whatsapp_messages')
    .where({ direction: 'out' })
    .orderBy('id', 'desc')
    .limit(Math.min(Math.max(options.limit ?? 50, 1), 500));
  if (options.beforeId !== undefined) void q.where('id', '<', options.beforeId);
  if (options.accountId) void q.where({ account_id: options.accountId });
  if (options.phone) void q.where({ phone: options.phone });
  return (await q).map(toMessage);
}

/** Returns the rows it moved. */
async function applyRecordedStatuses(db: Db, wamid: string): Promise<MessageRow[]> {
  // A status can arrive before the send call returned the id; fold in whatever is already recorded.
  const { rows } = await db
    .raw<{ rows: MessageRow[] }>(
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
      RETURNING ${MESSAGE_COLUMNS.map((c) => `m.${c}`).join(', ')}`,
      [wamid, wamid],
    )
    .options(named('whatsapp_statuses_apply'));
  return rows;
}
