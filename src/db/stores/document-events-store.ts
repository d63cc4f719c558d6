import type { Db } from '../knex.ts';

export interface DocumentEvent {
  id: number;
  accountId: string;
  documentId: string | null;
  approverId: string | null;
  event: string;
  data: Record<string, unknown>;
  dedupeKey: string;
  createdAt: Date;
}

interface DocumentEventRow {
  id: number;
  account_id: string;
  document_id: string | null;
  approver_id: string | null;
  event: string;
  data: Record<string, unknown>;
  dedupe_key: string;
  created_at: Date;
}

const toEvent = (r: DocumentEventRow): DocumentEvent => ({
  id: Number(r.id),
  accountId: r.account_id,
  documentId: r.document_id,
  approverId: r.approver_id,
  event: r.event,
  data: r.data,
  dedupeKey: r.dedupe_key,
  createdAt: r.created_at,
});

export interface NewDocumentEvent {
  accountId: string;
  documentId: string | null;
  approverId?: string | null;
  /** `document.created`, `document.sent`, … (the webhook event names). */
  event: string;
  data: Record<string, unknown>;
  /** One event per key, ever: `document.created:<document id>`, `approver.completed:<approver id>`. */
  dedupeKey: string;
}

/**
 * The record of what happened to documents: the source of webhook deliveries. Recording is idempotent on the
 * dedupe key, so an activity retried by Temporal records its event once.
 */
export function documentEventsStore(db: Db) {
  return {
    /** The stored event (with its id) whether this call inserted it or an earlier one did. */
    async record(input: NewDocumentEvent): Promise<DocumentEvent> {
      const [inserted] = await db<DocumentEventRow>('document_events')
        .insert({
          account_id: input.accountId,
          document_id: input.documentId,
          approver_id: input.approverId ?? null,
          event: input.event,
          data: input.data,
          dedupe_key: input.dedupeKey,
        })
        .onConflict('dedupe_key')
        .ignore()
        .returning('*');
      if (inserted) return toEvent(inserted);
      const existing = await db<DocumentEventRow>('document_events')
        .where({ dedupe_key: input.dedupeKey })
        .first();
      if (!existing) throw new Error(`document event ${input.dedupeKey} vanished after a conflict`);
      return toEvent(existing);
    },

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
        .orderBy('id', 'asc');
      return rows.map(toEvent);
    },
  };
}

export type DocumentEventsStore = ReturnType<typeof documentEventsStore>;
