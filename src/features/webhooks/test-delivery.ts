import type { SecretBox } from '../../auth/secret-box.ts';
import type { Knex } from '../../db/knex.ts';
import { openDeliveryBody, webhookDeliveriesStore } from './webhook-deliveries-store.ts';
import { webhookDispatchStore } from './webhook-dispatch-store.ts';
import { webhooksStore } from './webhooks-store.ts';
import { attemptRecord, deliverOnce, type DeliveryErrorClass } from './deliver.ts';
import { TEST_EVENT } from './events.ts';
import { buildEventBody, testEventData } from './payload.ts';
import type { ResolveHost } from './ssrf-guard.ts';

export interface TestDeliveryDeps {
  db: Knex;
  secrets: SecretBox;
  allowPrivate: boolean;
  timeoutMs: number;
  lookup?: ResolveHost;
}

export interface TestDeliveryResult {
  deliveryId: number;
  ok: boolean;
  statusCode: number | null;
  durationMs: number;
  /** The class of failure and Wathiq's fixed sentence for it; never a socket error or an address. */
  errorClass: DeliveryErrorClass | null;
  errorMessage: string | null;
  /** The underlying error, for the log only: it can name addresses and ports. */
  detail: string | null;
}

/**
 * `POST /webhooks/{id}/test`: sends a `webhook.test` delivery now, in the caller's request, signed like every
 * delivery, and records it (one delivery, one attempt) so it shows in the webhook's deliveries. It is sent once,
 * even to a disabled webhook, and never retried; a 410 answer does not disable the webhook. Undefined when the
 * account has no such webhook. The receiver's body is never returned, nor a socket error: failures are reported by
 * class (`timeout`, `connection_refused`, `dns`, `tls`, `http_status`, `blocked_address`, ...).
 */
export async function sendTestDelivery(
  deps: TestDeliveryDeps,
  accountId: string,
  webhookId: string,
): Promise<TestDeliveryResult | undefined> {
  const hooks = webhooksStore(deps.db);
  const webhook =
    (await hooks.findById(accountId, webhookId)) && (await hooks.findWithSecret(webhookId, deps.secrets));
  if (!webhook) return undefined;
  const deliveries = webhookDeliveriesStore(deps.db);
  const { delivery } = await deliveries.createOnce(
    {
      webhookId: webhook.id,
      accountId,
      eventId: null,
      event: TEST_EVENT,
      body: (deliveryId) =>
        buildEventBody({
          deliveryId,
          event: TEST_EVENT,
          sequence: null,
          createdAt: new Date(),
          data: testEventData(webhook),
        }),
    },
    deps.secrets,
  );
  const result = await deliverOnce({
    url: webhook.url,
    event: TEST_EVENT,
    deliveryId: delivery.id,
    body: openDeliveryBody(delivery, deps.secrets),
    secret: webhook.secret,
    timeoutMs: deps.timeoutMs,
    allowPrivate: deps.allowPrivate,
    ...(deps.lookup ? { lookup: deps.lookup } : {}),
  });
  await deliveries.recordAttempt(attemptRecord(delivery.id, 1, result));
  if (result.ok) await deliveries.markSucceeded(delivery.id);
  else await webhookDispatchStore(deps.db).fail(delivery.id, 'A test delivery is sent once and not retried');
  return {
    deliveryId: delivery.id,
    ok: result.ok,
    statusCode: result.status ?? null,
    durationMs: result.ms,
    errorClass: result.errorClass ?? null,
    errorMessage: result.errorMessage ?? null,
    detail: result.detail ?? null,
  };
}
