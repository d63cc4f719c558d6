import type { SecretBox } from '../../auth/secret-box.ts';
import type { Knex } from '../../db/knex.ts';
import { approversStore, type Approver } from '../documents/approvers-store.ts';
import { documentEventsStore, type DocumentEvent } from './document-events-store.ts';
import type { Document } from '../documents/documents-store.ts';
import { serializeApprover, serializeDocument } from '../documents/serialize.ts';
import type { Logger } from '../../logger.ts';

export interface DocumentEventsDeps {
  db: Knex;
  logger: Logger;
  /** Seals the bearer URLs an event carries (the approved event's download and verification URLs). */
  secrets: SecretBox;
  /** Called after an event is committed, to hand it to webhook delivery. */
  onEvent?: (event: DocumentEvent) => Promise<void>;
}

/** One event of a document, as a feature records it inside its transaction. */
export interface DocumentEventRecord {
  event: string;
  /** The event's identity: recording it again (a retry) finds the first one and changes nothing. */
  dedupeKey: string;
  document: Document;
  /**
   * The approver the event is about: `data.approver`, taken from `approvers` (or read again) so it carries what
   * this transaction wrote.
   */
  approver?: Approver;
  /**
   * The document's approvers as this transaction has them, its own writes included (`withApprover` puts a changed
   * row in): the event's `data.document.approvers`. Read in `trx` when absent.
   */
  approvers?: readonly Approver[];
  /** Added to `data.document` (the approved event's download URL). */
  documentExtra?: Record<string, unknown>;
  /** Added to `data` beside `document` and `approver` (a delegation's delegate). */
  extra?: Record<string, unknown>;
}

/** `approvers` with `changed` in place of the row of the same id (the row an UPDATE … RETURNING gave back). */
export function withApprover(approvers: readonly Approver[], changed: Approver): Approver[] {
  return approvers.map((a) => (a.id === changed.id ? changed : a));
}

/**
 * The transaction-and-event machinery every feature that records a document's events uses: the state change and
 * its event commit together, and the event is handed to webhook delivery only once committed. An event whose
 * hand-over is lost (a crash between commit and dispatch) goes out before the document's next event, or with the
 * outbox sweep.
 */
export function documentEvents(deps: DocumentEventsDeps) {
  /** The events each `inTransaction` transaction recorded, by dedupe key: what it hands to delivery once committed. */
  const recordedIn = new WeakMap<Knex.Transaction, Map<string, DocumentEvent>>();

  /**
   * Records the event in `trx`, which must hold the document's row already (read locked, or changed by an UPDATE,
   * which locks it until commit): the event's sequence number is taken under that lock.
   */
  async function record(trx: Knex.Transaction, entry: DocumentEventRecord): Promise<DocumentEvent> {
    const { document, approver } = entry;
    const approvers = entry.approvers ?? (await approversStore(trx).listByDocument(document.id));
    const current = approver ? approvers.find((a) => a.id === approver.id) : undefined;
    const recorded = await documentEventsStore(trx).record(
      {
        accountId: document.accountId,
        documentId: document.id,
        approverId: approver?.id ?? null,
        event: entry.event,
        data: {
          document: { ...serializeDocument(document, approvers), ...entry.documentExtra },
          ...(current ? { approver: serializeApprover(current) } : {}),
          ...entry.extra,
        },
        dedupeKey: entry.dedupeKey,
      },
      { documentLocked: true, secrets: deps.secrets },
    );
    recordedIn.get(trx)?.set(entry.dedupeKey, recorded);
    return recorded;
  }

  /** Runs `work` in a transaction; the events it recorded through `record`, by dedupe key, come back with it. */
  async function collecting<T>(
    work: (trx: Knex.Transaction) => Promise<T>,
  ): Promise<{ result: T; recorded: Map<string, DocumentEvent> }> {
    const recorded = new Map<string, DocumentEvent>();
    const result = await deps.db.transaction(async (trx) => {
      recordedIn.set(trx, recorded);
      return work(trx);
    });
    return { result, recorded };
  }

  return {
    record,
    collecting,

    /**
     * Runs `work` in a transaction, then hands the events named by `dedupeKeys` to delivery once committed —
     * whether this attempt recorded them or an earlier one did, so a retry after a failed hand-over still
     * delivers (delivery itself is idempotent).
     */
    async inTransaction<T>(dedupeKeys: string[], work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
      const { result, recorded } = await collecting(work);
      if (!deps.onEvent) return result;
      for (const key of dedupeKeys) {
        // Recorded (or found recorded) by this attempt: no need to read it back.
        const event = recorded.get(key) ?? (await documentEventsStore(deps.db).findByDedupeKey(key));
        if (event) await deps.onEvent(event);
      }
      return result;
    },

    /**
     * Hands a committed event to delivery without waiting for it, for a caller that must answer at once; a
     * failed hand-over is logged, and the event goes out as a lost one does.
     */
    dispatchSoon(event: DocumentEvent, context: Record<string, unknown>): void {
      deps
        .onEvent?.(event)
        .catch((err: unknown) =>
          deps.logger.warn({ err, ...context, event: event.event }, 'event not dispatched yet'),
        );
    },
  };
}

export type DocumentEvents = ReturnType<typeof documentEvents>;
