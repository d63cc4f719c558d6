import type { Db } from '../../db/knex.ts';

/**
 * What webhook dispatch and the delivery workflow write beyond `webhookDeliveriesStore`: the outbox marker on
 * document events (migration 006) and the end of deliveries that did not end by an attempt of their own.
 * Every write is guarded by the state it moves from, so an activity retried by Temporal changes nothing twice.
 */
export function webhookDispatchStore(db: Db) {
  return {
    /**
     * Ids of the events not yet handed to delivery, in the order they happened: the event itself and, for a
     * document event, every earlier event of the same document still waiting, so they go out first.
     */
    async undispatchedUpTo(event: { id: number; documentId: string | null }): Promise<number[]> {
      const query = db('document_events').whereNull('webhooks_dispatched_at').orderBy('id', 'asc');
      const rows: { id: number }[] =
        event.documentId === null
          ? await query.where({ id: event.id }).select('id')
          : await query.where({ document_id: event.documentId }).andWhere('id', '<=', event.id).select('id');
      return rows.map((r) => Number(r.id));
    },

    async markDispatched(eventId: number): Promise<void> {
      await db('document_events')
        .where({ id: eventId })
        .whereNull('webhooks_dispatched_at')
        .update({ webhooks_dispatched_at: db.fn.now() });
    },

    /** Events committed at least `olderThanMs` ago that no process dispatched (it died first), oldest first. */
    async findUndispatched(options: { olderThanMs: number; limit: number }): Promise<number[]> {
      const rows: { id: number }[] = await db('document_events')
        .whereNull('webhooks_dispatched_at')
        .andWhere('created_at', '<', db.raw(`now() - make_interval(secs => ?)`, [options.olderThanMs / 1000]))
        .orderBy('id', 'asc')
        .limit(options.limit)
        .select('id');
      return rows.map((r) => Number(r.id));
    },

    /** When the next attempt of a pending delivery is due (shown by the deliveries listing). */
    async setNextAttemptAt(deliveryId: number, at: Date): Promise<void> {
      await db('webhook_deliveries')
        .where({ id: deliveryId, status: 'pending' })
        .update({ next_attempt_at: at, updated_at: db.fn.now() });
    },

    /** Ends a pending delivery as `failed` with a reason the account can read. False when it was not pending. */
    async fail(deliveryId: number, reason: string): Promise<boolean> {
      const n = await db('webhook_deliveries')
        .where({ id: deliveryId, status: 'pending' })
        .update(failedPatch(db, reason));
      return n > 0;
    },

    /** Ends every pending delivery of a webhook (it was disabled or answered 410 Gone); returns how many. */
    async failPendingOfWebhook(webhookId: string, reason: string): Promise<number> {
      return db('webhook_deliveries')
        .where({ webhook_id: webhookId, status: 'pending' })
        .update(failedPatch(db, reason));
    },

    /** A reopened delivery starts without the reason its previous round ended. */
    async clearFailureReason(deliveryId: number): Promise<void> {
      await db('webhook_deliveries').where({ id: deliveryId }).update({ failure_reason: null });
    },

    async failureReasons(deliveryIds: readonly number[]): Promise<Map<number, string>> {
      if (deliveryIds.length === 0) return new Map();
      const rows: { id: number; failure_reason: string }[] = await db('webhook_deliveries')
        .whereIn('id', deliveryIds)
        .whereNotNull('failure_reason')
        .select('id', 'failure_reason');
      return new Map(rows.map((r) => [Number(r.id), r.failure_reason]));
    },
  };
}

function failedPatch(db: Db, reason: string) {
  return {
    status: 'failed',
    failure_reason: reason.slice(0, 255),
    completed_at: db.raw('COALESCE(completed_at, now())'),
    next_attempt_at: null,
    updated_at: db.fn.now(),
  };
}

export type WebhookDispatchStore = ReturnType<typeof webhookDispatchStore>;
