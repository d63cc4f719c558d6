import type { Knex } from '../../db/knex.ts';
import { webhookDeliveriesStore } from './webhook-deliveries-store.ts';
import { webhookDispatchStore } from './webhook-dispatch-store.ts';
import { webhooksStore, type Webhook } from './webhooks-store.ts';
import type { WebhookDispatcher } from './dispatch.ts';
import { serializeDelivery } from './serialize.ts';

/**
 * Changes a webhook's url, events or active flag; undefined when the account has no such webhook. Disabling it
 * fails its pending deliveries in the same transaction, so none is attempted again (docs/product-rules.md §7).
 */
export async function updateWebhook(
  db: Knex,
  accountId: string,
  id: string,
  changes: { url?: string; events?: readonly string[]; active?: boolean },
): Promise<Webhook | undefined> {
  return db.transaction(async (trx) => {
    const webhook = await webhooksStore(trx).update(accountId, id, changes);
    if (webhook && changes.active === false) {
      await webhookDispatchStore(trx).failPendingOfWebhook(
        id,
        'The webhook was disabled (PUT active: false)',
      );
    }
    return webhook;
  });
}

/** A page of a webhook's deliveries, newest first, each with its attempts and why it failed (if it did). */
export async function listDeliveries(
  db: Knex,
  accountId: string,
  webhookId: string,
  page: { page: number; perPage: number },
) {
  const { items, total } = await webhookDeliveriesStore(db).listByWebhook(accountId, webhookId, page);
  const reasons = await webhookDispatchStore(db).failureReasons(items.map((d) => d.id));
  return { items: items.map((d) => serializeDelivery(d, reasons.get(d.id) ?? null)), total };
}

/**
 * `POST /webhooks/deliveries/{id}/redeliver`: the dispatcher reopens the delivery and queues a new round; the answer
 * is the delivery as it stands, with its past attempts.
 */
export async function redeliver(
  deps: { db: Knex; dispatcher: WebhookDispatcher },
  accountId: string,
  deliveryId: number,
) {
  const { bodySealed: _body, ...delivery } = await deps.dispatcher.redeliver(accountId, deliveryId);
  const attempts = await webhookDeliveriesStore(deps.db).listAttempts(delivery.id);
  return serializeDelivery({ ...delivery, attempts }, null);
}
