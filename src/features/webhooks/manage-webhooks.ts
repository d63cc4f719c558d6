import type { SecretBox } from '../../auth/secret-box.ts';
import type { Knex } from '../../db/knex.ts';
import { webhookDeliveriesStore } from './webhook-deliveries-store.ts';
import { webhookDispatchStore } from './webhook-dispatch-store.ts';
import { webhooksStore, type Webhook } from './webhooks-store.ts';
import type { WebhookDispatcher } from './dispatch.ts';
import { serializeDelivery } from './serialize.ts';
import { generateWebhookSecret } from './signature.ts';

export type { Webhook };

/** The account's webhook, or undefined: another account's reads as one that does not exist. */
export async function findWebhook(db: Knex, accountId: string, id: string): Promise<Webhook | undefined> {
  return webhooksStore(db).findById(accountId, id);
}

/** A page of the account's webhooks, newest first. */
export async function listWebhooks(
  db: Knex,
  accountId: string,
  page: { page: number; perPage: number },
): Promise<{ items: Webhook[]; total: number }> {
  return webhooksStore(db).list(accountId, page);
}

/**
 * Creates a webhook for a url already checked, with a new signing secret: sealed in the database, and returned
 * here only, so the caller can show it once.
 */
export async function createWebhook(
  deps: { db: Knex; secrets: SecretBox },
  input: { accountId: string; url: string; events: readonly string[] },
): Promise<{ webhook: Webhook; secret: string }> {
  const secret = generateWebhookSecret();
  const webhook = await webhooksStore(deps.db).create({ ...input, secret }, deps.secrets);
  return { webhook, secret };
}

/** Deletes the webhook with its deliveries; false when the account has no such webhook. */
export async function deleteWebhook(db: Knex, accountId: string, id: string): Promise<boolean> {
  return webhooksStore(db).delete(accountId, id);
}

/** Replaces the signing secret (the old one stops signing at once); undefined when there is no such webhook. */
export async function rotateWebhookSecret(
  deps: { db: Knex; secrets: SecretBox },
  accountId: string,
  id: string,
): Promise<{ webhook: Webhook; secret: string } | undefined> {
  const secret = generateWebhookSecret();
  const webhook = await webhooksStore(deps.db).rotateSecret(accountId, id, secret, deps.secrets);
  return webhook && { webhook, secret };
}

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
