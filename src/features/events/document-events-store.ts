import type { SecretBox } from '../../auth/secret-box.ts';
import type { Db, Knex } from '../../db/knex.ts';
import { allColumns, named } from '../../db/prepared.ts';
import { eventBearerContext } from '../../db/sealed-columns.ts';

export interface DocumentEvent {
  id: number;
  accountId: string;
  documentId: string | null;
  approverId: string | null;
  event: string;
  /** 1, 2, 3… per document, in the order the events were recorded, without gaps (migration 011). */
  sequence: number;
  /** Without its bearer URLs (`fullEventData` puts them back). */
  data: Record<string, unknown>;
  /** `data.document`'s bearer URLs (download_url, verification_url), sealed; null when it carries none. */
  bearerSealed: string | null;
  dedupeKey: string;
  createdAt: Date;
  /**
   * Whether the event still has to be handed to webhook delivery. False once dispatched, and from the start when
   * no active webhook of the account subscribed to it at the moment it was recorded (nothing to hand over).
   */
  awaitsDispatch: boolean;
}

interface DocumentEventRow {
  id: number;
  account_id: string;
  document_id: string | null;
  approver_id: string | null;
  event: string;
  sequence: number;
  data: Record<string, unknown>;
  bearer_sealed: string | null;
  dedupe_key: string;
  created_at: Date;
  webhooks_dispatched_at: Date | null;
}

/** Every column `DocumentEventRow` holds: the named insert returns these, never `*`. */
const EVENT_COLUMNS = allColumns<DocumentEventRow>()([
  'id',
  'account_id',
  'document_id',
  'approver_id',
  'event',
  'sequence',
  'data',
  'bearer_sealed',
  'dedupe_key',
  'created_at',
  'webhooks_dispatched_at',
]);

const toEvent = (r: DocumentEventRow): DocumentEvent => ({
  id: Number(r.id),
  accountId: r.account_id,
  documentId: r.document_id,
  approverId: r.approver_id,
  event: r.event,
  sequence: Number(r.sequence),
  data: r.data,
  bearerSealed: r.bearer_sealed ?? null,
  dedupeKey: r.dedupe_key,
  createdAt: r.created_at,
  awaitsDispatch: r.webhooks_dispatched_at === null,
});

export interface NewDocumentEvent {
  accountId: string;
  /** Every event is about a document (the column is nullable only because deleting a draft keeps its events). */
  documentId: string;
  approverId?: string | null;
  /** `document.created`, `document.sent`, … (the webhook event names). */
  event: string;
  data: Record<string, unknown>;
  /** One event per key, ever: `document.created:<document id>`, `approver.completed:<approver id>`. */
  dedupeKey: string;
}

/**
 * Fields of `data.document` that work as credentials: anyone holding the URL downloads the signed file or opens its
 * verification page. They are kept sealed beside the event (`bearer_sealed`, migration 031), not in `data`.
 */
export const BEARER_FIELDS = ['download_url', 'verification_url'] as const;

/** `data` without the bearer fields of `data.document`, and those fields (undefined when there are none). */
export function splitBearer(data: Record<string, unknown>): {
  data: Record<string, unknown>;
  bearer: Record<string, unknown> | undefined;
} {
  const document = data.document;
  if (typeof document !== 'object' || document === null) return { data, bearer: undefined };
  const rest: Record<string, unknown> = {};
  const bearer: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(document)) {
    if ((BEARER_FIELDS as readonly string[]).includes(key)) bearer[key] = value;
    else rest[key] = value;
  }
  if (Object.keys(bearer).length === 0) return { data, bearer: undefined };
  return { data: { ...data, document: rest }, bearer };
}

/** The event's data as it was recorded: the bearer fields opened and put back at the end of `data.document`. */
export function fullEventData(event: DocumentEvent, secrets: SecretBox): Record<string, unknown> {
  if (event.bearerSealed === null) return event.data;
  const bearer = JSON.parse(secrets.open(event.bearerSealed, eventBearerContext(event.dedupeKey))) as Record<
    string,
    unknown
  >;
  const document = (event.data.document ?? {}) as Record<string, unknown>;
  return { ...event.data, document: { ...document, ...bearer } };
}

/** Where PostgreSQL announces, on commit, a document's `document.sent` event recorded (its document id; migration 029). */
export const DOCUMENT_SENT_CHANNEL = 'wathiq_document_sent';

/**
 * The record of what happened to documents: the source of webhook deliveries. Recording is idempotent on the
 * dedupe key, so an activity retried by Temporal records its event once.
 */
export function documentEventsStore(db: Db) {
  return { ...documentEventRecording(db), ...accountEventRecording(db), ...eventReads(db) };
}

/** A document's events, recorded once each in its sequence. */
function documentEventRecording(db: Db) {
  return {
    /**
     * The stored event (with its id) whether this call inserted it or an earlier one did. A new event takes the
     * next `sequence` of its document: the insert holds the document's row lock (most callers hold it already),
     * so concurrent recorders of one document take turns and the numbers have no gaps, and an event refused as
     * a repeat (its dedupe key exists) takes no number. `documentLocked`: the caller's transaction already holds
     * the document's row locked (findByIdForUpdate, which excludes other recorders just as well), so it is not
     * locked again.
     *
     * An event no active webhook of the account subscribes to is stored as dispatched (`awaitsDispatch` false):
     * there is nothing to hand over, so the dispatcher, the outbox sweep and their three statements skip it. A
     * webhook created (or subscribed) later receives the events recorded after that, not the ones before.
     */
    async record(
      input: NewDocumentEvent,
      options: { documentLocked?: boolean; secrets?: SecretBox } = {},
    ): Promise<DocumentEvent> {
      const { data, bearer } = splitBearer(input.data);
      if (bearer && !options.secrets)
        throw new Error(
          `documentEventsStore.record: ${input.event} carries bearer URLs; pass the secret box`,
        );
      const bearerSealed =
        bearer && options.secrets!.seal(JSON.stringify(bearer), eventBearerContext(input.dedupeKey));
      const insert = async (trx: Knex.Transaction): Promise<DocumentEventRow | undefined> => {
        if (!options.documentLocked || !db.isTransaction)
          await trx.raw('SELECT 1 FROM documents WHERE id = ? FOR NO KEY UPDATE', [input.documentId]);
        const { rows } = await trx
          .raw<{ rows: DocumentEventRow[] }>(
            `INSERT INTO document_events
                  (account_id, document_id, approver_id, event, data, bearer_sealed, dedupe_key, sequence,
                   webhooks_dispatched_at)
           SELECT ?, ?, ?, ?, ?::jsonb, ?, ?, COALESCE(MAX(sequence), 0) + 1,
                  CASE WHEN EXISTS (SELECT 1 FROM webhooks w
                                     WHERE w.account_id = ? AND w.active AND ? = ANY(w.events))
                       THEN NULL ELSE now() END
             FROM document_events WHERE document_id = ?
           ON CONFLICT (dedupe_key) DO NOTHING
           RETURNING ${EVENT_COLUMNS.join(', ')}`,
            [
              input.accountId,
              input.documentId,
              input.approverId ?? null,
              input.event,
              JSON.stringify(data),
              bearerSealed ?? null,
              input.dedupeKey,
              input.accountId,
              input.event,
              input.documentId,
            ],
          )
          .options(named('document_event_insert'));
        return rows[0];
      };
      // The lock lasts until the end of the transaction: the caller's, or one of its own.
      const inserted = db.isTransaction ? await insert(db as Knex.Transaction) : await db.transaction(insert);
      if (inserted) return toEvent(inserted);
      const existing = await db<DocumentEventRow>('document_events')
        .where({ dedupe_key: input.dedupeKey })
        .first();
      if (!existing) throw new Error(`document event ${input.dedupeKey} vanished after a conflict`);
      return toEvent(existing);
    },
  };
}

/** Events about an account rather than one document. */
function accountEventRecording(db: Db) {
  return {
    /**
     * An event about the account rather than one document (`bulk_send.completed`): no document, `sequence` 1 (it
     * is the only event of what it reports). Idempotent on the dedupe key, like `record`.
     */
    async recordAccountEvent(
      input: Omit<NewDocumentEvent, 'documentId' | 'approverId'>,
    ): Promise<DocumentEvent> {
      const { rows } = await db.raw<{ rows: DocumentEventRow[] }>(
        `INSERT INTO document_events
                (account_id, document_id, approver_id, event, data, dedupe_key, sequence, webhooks_dispatched_at)
         SELECT ?, NULL, NULL, ?, ?::jsonb, ?, 1,
                CASE WHEN EXISTS (SELECT 1 FROM webhooks w WHERE w.account_id = ? AND w.active AND ? = ANY(w.events))
                     THEN NULL ELSE now() END
         ON CONFLICT (dedupe_key) DO NOTHING
         RETURNING *`,
        [
          input.accountId,
          input.event,
          JSON.stringify(input.data),
          input.dedupeKey,
          input.accountId,
          input.event,
        ],
      );
      if (rows[0]) return toEvent(rows[0]);
      const existing = await db<DocumentEventRow>('document_events')
        .where({ dedupe_key: input.dedupeKey })
        .first();
      if (!existing) throw new Error(`event ${input.dedupeKey} vanished after a conflict`);
      return toEvent(existing);
    },
  };
}

/** Recorded events, read back. */
function eventReads(db: Db) {
  return {
    async findByDedupeKey(dedupeKey: string): Promise<DocumentEvent | undefined> {
      const row = await db<DocumentEventRow>('document_events').where({ dedupe_key: dedupeKey }).first();
      return row && toEvent(row);
    },

    async findById(id: number): Promise<DocumentEvent | undefined> {
      const row = await db<DocumentEventRow>('document_events').where({ id }).first();
      return row && toEvent(row);
    },

    async listByDocument(accountId: string, documentId: string): Promise<DocumentEvent[]> {
      const rows = await db<DocumentEventRow>('document_events')
        .where({ account_id: accountId, document_id: documentId })
        .orderBy('sequence', 'asc');
      return rows.map(toEvent);
    },
  };
}

export type DocumentEventsStore = ReturnType<typeof documentEventsStore>;
