import type { Db } from '../../db/knex.ts';
import type { ActionProtocol, RecordedAction } from './definitions.ts';

/**
 * The approval outbox (migrations 045 and 048): `approval_signals`, what a document's run must still hear of actions the
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

/** An `approval_signals` row as stored. */
export interface SignalRow {
  id: string;
  document_id: string;
  workflow_id: string;
  signal: string;
  payload: RecordedAction;
  created_at: Date;
  sent_at: Date | null;
  leased_until: Date | null;
  attempts: number;
  last_error: string | null;
  dead_at: Date | null;
  dead_reason: string | null;
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

    /** A signal that will never be sent (`reason`): it leaves the unsent backlog and is counted apart. */
    async markDead(id: string, reason: string): Promise<void> {
      await db<SignalRow>(SIGNALS)
        .where({ id })
        .whereNull('sent_at')
        .update({ dead_at: db.fn.now(), dead_reason: reason, leased_until: null });
    },

    /** A send that failed: counted, its error kept, and the row free for the next pass at once. */
    async markFailed(id: string, error: string): Promise<void> {
      await db<SignalRow>(SIGNALS)
        .where({ id })
        .update({ attempts: db.raw('attempts + 1'), last_error: error.slice(0, 1000), leased_until: null });
    },

    /** Claimed rows this relay did not try after all: free for the next pass. */
    async release(ids: readonly string[]): Promise<void> {
      if (ids.length === 0) return;
      await db<SignalRow>(SIGNALS).whereIn('id', ids).whereNull('sent_at').update({ leased_until: null });
    },

    /**
     * Claims up to `limit` unsent signals queued at least `olderThanMs` ago and not leased by another relay, oldest
     * first, by leasing them for `leaseMs` in one statement: no transaction or row lock outlives it, so the
     * sends that follow hold no connection. Rows another claim is writing at that moment are skipped.
     */
    async claimUnsent(options: {
      olderThanMs: number;
      leaseMs: number;
      limit: number;
    }): Promise<ApprovalSignal[]> {
      const { rows } = await db.raw<{ rows: SignalRow[] }>(
        `UPDATE ${SIGNALS} SET leased_until = now() + make_interval(secs => ?)
          WHERE id IN (
            SELECT id FROM ${SIGNALS}
             WHERE sent_at IS NULL AND dead_at IS NULL
               AND created_at < now() - make_interval(secs => ?)
               AND (leased_until IS NULL OR leased_until <= now())
             ORDER BY created_at
             LIMIT ?
             FOR UPDATE SKIP LOCKED)
          RETURNING *`,
        [options.leaseMs / 1000, options.olderThanMs / 1000, options.limit],
      );
      return rows.sort((a, b) => a.created_at.getTime() - b.created_at.getTime()).map(toSignal);
    },

    /**
     * What the relay has not delivered, for the metrics: unsent rows and the age of the oldest (0 when none), and
     * the rows given up for good.
     */
    async backlog(): Promise<{ unsent: number; oldestSeconds: number; dead: number }> {
      const { rows } = await db.raw<{ rows: { unsent: string; oldest: number | null; dead: string }[] }>(
        `SELECT
           (SELECT count(*) FROM ${SIGNALS} WHERE sent_at IS NULL AND dead_at IS NULL) AS unsent,
           (SELECT extract(epoch FROM now() - min(created_at))::float8
              FROM ${SIGNALS} WHERE sent_at IS NULL AND dead_at IS NULL) AS oldest,
           (SELECT count(*) FROM ${SIGNALS} WHERE dead_at IS NOT NULL) AS dead`,
      );
      const row = rows[0]!;
      return { unsent: Number(row.unsent), oldestSeconds: row.oldest ?? 0, dead: Number(row.dead) };
    },

    /** Written once by the run's first activity (a retry finds it). */
    async setProtocol(documentId: string, protocol: ActionProtocol): Promise<void> {
      await db(PROTOCOLS).insert({ document_id: documentId, protocol }).onConflict('document_id').ignore();
    },
  };
}
