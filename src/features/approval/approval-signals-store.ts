import type { Db, Knex } from '../../db/knex.ts';
import type { ActionProtocol, RecordedAction } from './definitions.ts';

/**
 * The approval outbox (migration 045): `approval_signals`, what a document's run must still hear of actions the
 * API recorded, and `approval_run_protocols`, which runs follow recorded actions. Every function takes the pool
 * or a transaction.
 */
export interface ApprovalSignal {
  id: string;
  documentId: string;
  workflowId: string;
  signal: string;
  payload: RecordedAction;
}

interface SignalRow {
  id: string;
  document_id: string;
  workflow_id: string;
  signal: string;
  payload: RecordedAction;
  created_at: Date;
  sent_at: Date | null;
}

const SIGNALS = 'approval_signals';
const PROTOCOLS = 'approval_run_protocols';

const toSignal = (r: SignalRow): ApprovalSignal => ({
  id: r.id,
  documentId: r.document_id,
  workflowId: r.workflow_id,
  signal: r.signal,
  payload: r.payload,
});

export function approvalSignalsStore(db: Db) {
  return {
    /** Queues a signal for a document's run; written in the transaction that recorded what it tells. */
    async enqueue(input: Omit<ApprovalSignal, 'id'>): Promise<ApprovalSignal> {
      const [row] = await db<SignalRow>(SIGNALS)
        .insert({
          document_id: input.documentId,
          workflow_id: input.workflowId,
          signal: input.signal,
          payload: input.payload,
        })
        .returning('*');
      return toSignal(row!);
    },

    async markSent(id: string): Promise<void> {
      await db<SignalRow>(SIGNALS).where({ id }).whereNull('sent_at').update({ sent_at: db.fn.now() });
    },

    /**
     * Unsent signals queued at least `olderThanMs` ago, oldest first, locked for this transaction (others skip
     * them): the relay's batch.
     */
    async claimUnsent(trx: Knex.Transaction, olderThanMs: number, limit: number): Promise<ApprovalSignal[]> {
      const rows = await trx<SignalRow>(SIGNALS)
        .whereNull('sent_at')
        .where('created_at', '<', trx.raw(`now() - make_interval(secs => ?)`, [olderThanMs / 1000]))
        .orderBy('created_at')
        .limit(limit)
        .forUpdate()
        .skipLocked();
      return rows.map(toSignal);
    },

    /** How the document's run takes actions: `signal`, or undefined for the act update. */
    async protocolOf(documentId: string): Promise<ActionProtocol | undefined> {
      const row = await db<{ document_id: string; protocol: ActionProtocol }>(PROTOCOLS)
        .where({ document_id: documentId })
        .first('protocol');
      return row?.protocol;
    },

    /** Written once by the run's first activity (a retry finds it). */
    async setProtocol(documentId: string, protocol: ActionProtocol): Promise<void> {
      await db(PROTOCOLS).insert({ document_id: documentId, protocol }).onConflict('document_id').ignore();
    },
  };
}
