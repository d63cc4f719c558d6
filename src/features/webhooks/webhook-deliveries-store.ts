import type { SecretBox } from '../../auth/secret-box.ts';
import type { Db } from '../../db/knex.ts';
import { deliveryBodyContext } from '../../db/sealed-columns.ts';

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

/** One event for one webhook. Its body, the exact string sent on every attempt, is kept sealed (`openDeliveryBody`). */
export interface WebhookDelivery {
  id: number;
  webhookId: string;
  accountId: string;
  eventId: number | null;
  event: string;
  bodySealed: string;
  status: DeliveryStatus;
  attemptCount: number;
  lastStatusCode: number | null;
  nextAttemptAt: Date | null;
  completedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface DeliveryAttempt {
  attemptNumber: number;
  startedAt: Date;
  statusCode: number | null;
  durationMs: number;
  errorClass: string | null;
  errorMessage: string | null;
}

export type DeliveryWithAttempts = Omit<WebhookDelivery, 'bodySealed'> & { attempts: DeliveryAttempt[] };

/** The body to send, opened. */
export function openDeliveryBody(
  delivery: Pick<WebhookDelivery, 'id' | 'bodySealed'>,
  secrets: SecretBox,
): string {
  return secrets.open(delivery.bodySealed, deliveryBodyContext(delivery.id));
}

interface DeliveryRow {
  id: number;
  webhook_id: string;
  account_id: string;
  event_id: number | null;
  event: string;
  body_sealed: string;
  status: DeliveryStatus;
  attempt_count: number;
  last_status_code: number | null;
  next_attempt_at: Date | null;
  completed_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

interface AttemptRow {
  id: number;
  delivery_id: number;
  attempt_number: number;
  started_at: Date;
  status_code: number | null;
  duration_ms: number;
  error_class: string | null;
  error_message: string | null;
}

const toDelivery = (r: DeliveryRow): WebhookDelivery => ({
  id: r.id,
  webhookId: r.webhook_id,
  accountId: r.account_id,
  eventId: r.event_id,
  event: r.event,
  bodySealed: r.body_sealed,
  status: r.status,
  attemptCount: r.attempt_count,
  lastStatusCode: r.last_status_code,
  nextAttemptAt: r.next_attempt_at,
  completedAt: r.completed_at,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const toAttempt = (r: AttemptRow): DeliveryAttempt => ({
  attemptNumber: r.attempt_number,
  startedAt: r.started_at,
  statusCode: r.status_code,
  durationMs: r.duration_ms,
  errorClass: r.error_class,
  errorMessage: r.error_message,
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const MAX_ERROR_MESSAGE = 1000;

export interface RecordAttemptInput {
  deliveryId: number;
  /** 1-based; an attempt number is recorded once, so a retried activity does not add a row. */
  attemptNumber: number;
  startedAt: Date;
  statusCode?: number;
  durationMs: number;
  errorClass?: string;
  errorMessage?: string;
  /** When the next attempt is due (null: none planned); left as is when undefined. */
  nextAttemptAt?: Date | null;
}

/**
 * Deliveries of events to webhooks and their attempts. Writes are idempotent so the activities that call them may
 * be retried: a delivery is unique per (webhook, event), an attempt per (delivery, attempt number).
 */
export function webhookDeliveriesStore(db: Db) {
  return {
    createOnce: (input: NewDelivery, secrets: SecretBox) => createOnce(db, input, secrets),
    /** A delivery of this account (with its body), or undefined. */
    findById: (accountId: string, id: number) => findDelivery(db, accountId, id),
    /** A delivery by id alone, for the deliverer (activities address deliveries by id). */
    load: (id: number) => loadDelivery(db, id),
    recordAttempt: (input: RecordAttemptInput) => recordAttempt(db, input),
    markSucceeded: (id: number) => finish(db, id, 'succeeded'),
    /** After the last attempt of the schedule failed, or the webhook answered 410 Gone. */
    markFailed: (id: number) => finish(db, id, 'failed'),
    reopen: (accountId: string, id: number) => reopen(db, accountId, id),
    listAttempts: (deliveryId: number) => listAttempts(db, deliveryId),
    listByWebhook: (accountId: string, webhookId: string, page: { page: number; perPage: number }) =>
      listByWebhook(db, accountId, webhookId, page),
  };
}

interface NewDelivery {
  webhookId: string;
  accountId: string;
  eventId: number | null;
  event: string;
  body: (deliveryId: number) => string;
}

/**
 * Creates the delivery of one event to one webhook, or returns the one that exists for (webhook, event id).
 * The body carries the delivery id, so the id is drawn first and `body(id)` builds the string stored (sealed,
 * bound to the id). Without an event id (a `webhook.test` delivery) every call creates a new delivery.
 */
async function createOnce(
  db: Db,
  input: NewDelivery,
  secrets: SecretBox,
): Promise<{ delivery: WebhookDelivery; created: boolean }> {
  const { rows } = await db.raw<{ rows: { id: number }[] }>(
    `SELECT nextval(pg_get_serial_sequence('webhook_deliveries', 'id')) AS id`,
  );
  const id = Number(rows[0]!.id);
  const insert = db('webhook_deliveries').insert({
    id,
    webhook_id: input.webhookId,
    account_id: input.accountId,
    event_id: input.eventId,
    event: input.event,
    body_sealed: secrets.seal(input.body(id), deliveryBodyContext(id)),
  });
  const [row] =
    input.eventId === null
      ? await insert.returning<DeliveryRow[]>('*')
      : await insert.onConflict(['webhook_id', 'event_id']).ignore().returning<DeliveryRow[]>('*');
  if (row) return { delivery: toDelivery(row), created: true };
  const existing = await db('webhook_deliveries')
    .where({ webhook_id: input.webhookId, event_id: input.eventId })
    .first<DeliveryRow>();
  return { delivery: toDelivery(existing), created: false };
}

async function findDelivery(db: Db, accountId: string, id: number): Promise<WebhookDelivery | undefined> {
  if (!Number.isSafeInteger(id) || id < 1) return undefined;
  const row = await db('webhook_deliveries')
    .where({ id, account_id: accountId })
    .first<DeliveryRow | undefined>();
  return row && toDelivery(row);
}

async function loadDelivery(db: Db, id: number): Promise<WebhookDelivery | undefined> {
  const row = await db('webhook_deliveries').where({ id }).first<DeliveryRow | undefined>();
  return row && toDelivery(row);
}

/**
 * Records one attempt (once per attempt number) and refreshes the delivery's attempt count and last status
 * code from the attempts themselves, so running it twice changes nothing. Returns whether a row was added.
 */
async function recordAttempt(db: Db, input: RecordAttemptInput): Promise<boolean> {
  const inserted = await db('webhook_delivery_attempts')
    .insert({
      delivery_id: input.deliveryId,
      attempt_number: input.attemptNumber,
      started_at: input.startedAt,
      status_code: input.statusCode ?? null,
      duration_ms: Math.max(0, Math.round(input.durationMs)),
      error_class: input.errorClass ?? null,
      error_message: input.errorMessage?.slice(0, MAX_ERROR_MESSAGE) ?? null,
    })
    .onConflict(['delivery_id', 'attempt_number'])
    .ignore()
    .returning('id');
  const patch: Record<string, unknown> = {
    attempt_count: db('webhook_delivery_attempts').where({ delivery_id: input.deliveryId }).count('*'),
    last_status_code: db('webhook_delivery_attempts')
      .where({ delivery_id: input.deliveryId })
      .orderBy('attempt_number', 'desc')
      .limit(1)
      .select('status_code'),
    updated_at: db.fn.now(),
  };
  if (input.nextAttemptAt !== undefined) patch.next_attempt_at = input.nextAttemptAt;
  await db('webhook_deliveries').where({ id: input.deliveryId }).update(patch);
  return inserted.length > 0;
}

/**
 * Puts a delivery of this account back to `pending` for a redelivery, keeping its id, body and past attempts.
 * Returns the delivery and the number the next attempt takes, or undefined when there is no such delivery
 * or it is pending already.
 */
async function reopen(
  db: Db,
  accountId: string,
  id: number,
): Promise<{ delivery: WebhookDelivery; nextAttemptNumber: number } | undefined> {
  if (!Number.isSafeInteger(id) || id < 1) return undefined;
  const [row] = await db('webhook_deliveries')
    .where({ id, account_id: accountId })
    // Only a finished delivery: two redeliveries racing reopen it once.
    .whereNot({ status: 'pending' })
    .update({ status: 'pending', completed_at: null, next_attempt_at: null, updated_at: db.fn.now() })
    .returning<DeliveryRow[]>('*');
  if (!row) return undefined;
  const max = await db('webhook_delivery_attempts')
    .where({ delivery_id: id })
    .max<{ max: number | null }>('attempt_number as max')
    .first();
  return { delivery: toDelivery(row), nextAttemptNumber: (max?.max ?? 0) + 1 };
}

async function listAttempts(db: Db, deliveryId: number): Promise<DeliveryAttempt[]> {
  const rows = await db('webhook_delivery_attempts')
    .where({ delivery_id: deliveryId })
    .orderBy('attempt_number', 'asc')
    .select<AttemptRow[]>('*');
  return rows.map(toAttempt);
}

/** Deliveries of one webhook of this account, newest first, each with its attempts in order. */
async function listByWebhook(
  db: Db,
  accountId: string,
  webhookId: string,
  page: { page: number; perPage: number },
): Promise<{ items: DeliveryWithAttempts[]; total: number }> {
  if (!UUID.test(webhookId)) return { items: [], total: 0 };
  const scope = { webhook_id: webhookId, account_id: accountId };
  const [rows, count] = await Promise.all([
    db('webhook_deliveries')
      .where(scope)
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .limit(page.perPage)
      .offset((page.page - 1) * page.perPage)
      .select<DeliveryRow[]>('*'),
    db('webhook_deliveries').where(scope).count<{ count: string | number }[]>({ count: '*' }),
  ]);
  const ids = rows.map((r) => r.id);
  const attempts =
    ids.length === 0
      ? []
      : await db('webhook_delivery_attempts')
          .whereIn('delivery_id', ids)
          .orderBy([{ column: 'delivery_id' }, { column: 'attempt_number' }])
          .select<AttemptRow[]>('*');
  const byDelivery = new Map<number, DeliveryAttempt[]>();
  for (const a of attempts) {
    const list = byDelivery.get(a.delivery_id) ?? [];
    list.push(toAttempt(a));
    byDelivery.set(a.delivery_id, list);
  }
  const items = rows.map((r) => {
    const { bodySealed: _body, ...delivery } = toDelivery(r);
    return { ...delivery, attempts: byDelivery.get(r.id) ?? [] };
  });
  return { items, total: Number(count[0]?.count ?? 0) };
}

async function finish(db: Db, id: number, status: 'succeeded' | 'failed'): Promise<void> {
  await db('webhook_deliveries')
    .where({ id })
    .update({
      status,
      // Kept from the first call, so a retried activity does not move it.
      completed_at: db.raw('COALESCE(completed_at, now())'),
      next_attempt_at: null,
      updated_at: db.fn.now(),
    });
}
