import type { Knex } from '../../db/knex.ts';
import { AppError } from '../../errors.ts';
import type { Logger } from '../../logger.ts';
import type { WebhookDispatcher } from '../webhooks/dispatch.ts';
import { recordBulkSendEvent } from './bulk-send-events.ts';
import { bulkSendStore, OPEN_BULK_STATUSES, type BulkSend } from './bulk-send-store.ts';
import type { BulkSendClient } from './client.ts';

/**
 * POST /bulk-sends/{id}/cancel. Under the bulk send's row lock, which waits for every row being sent right now
 * (each holds a share lock on it while it commits): once this commits, no further row is sent. Rows not sent become
 * `cancelled` (a draft already made stays a draft); documents already sent go on. `bulk_send.cancelled` is recorded
 * in the same transaction. A finished bulk send is 409.
 */
export async function cancelBulkSend(
  deps: { db: Knex; bulkSends: BulkSendClient; webhooks?: WebhookDispatcher; logger: Logger },
  input: { accountId: string; id: string },
): Promise<BulkSend> {
  const { bulk, event } = await deps.db.transaction(async (trx) => {
    const store = bulkSendStore(trx);
    const current = await store.findById(input.accountId, input.id, { lock: 'update' });
    if (!current) throw AppError.notFound('Bulk send');
    if (!OPEN_BULK_STATUSES.includes(current.status))
      throw AppError.conflict(
        'bulk_send_closed',
        `Bulk send is ${current.status}; only a queued, running or paused one can be cancelled`,
      );
    await store.cancelRemaining(current.id);
    const cancelled = (await store.transition(current.id, OPEN_BULK_STATUSES, 'cancelled', {
      cancelledAt: new Date(),
      resumesAt: null,
    }))!;
    return { bulk: cancelled, event: await recordBulkSendEvent(trx, cancelled, 'bulk_send.cancelled') };
  });
  await deps.webhooks
    ?.dispatchEvent(event)
    .catch((err: unknown) =>
      deps.logger.warn({ err, bulkSendId: bulk.id }, 'bulk_send.cancelled not dispatched yet'),
    );
  await deps.bulkSends
    .cancelled(bulk.id)
    .catch((err: unknown) =>
      deps.logger.warn(
        { err, bulkSendId: bulk.id },
        'the bulk-send workflow was not told of its cancellation; it stops at its next page',
      ),
    );
  return bulk;
}
