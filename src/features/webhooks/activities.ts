import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { Knex } from '../../db/knex.ts';
import type { SecretBox } from '../../auth/secret-box.ts';
import {
  openDeliveryBody,
  webhookDeliveriesStore,
  type DeliveryAttempt,
} from './webhook-deliveries-store.ts';
import { webhookDispatchStore } from './webhook-dispatch-store.ts';
import { webhooksStore } from './webhooks-store.ts';
import type { Logger } from '../../logger.ts';
import type { WebhookAttemptOutcome, WebhookMetrics } from '../../metrics/metrics.ts';
import { whileHeartbeating } from '../../temporal/heartbeat.ts';
import { attemptRecord, deliverOnce, type DeliveryResult } from './deliver.ts';
import type { WebhookDispatcher } from './dispatch.ts';
import type { WebhookEvent } from './events.ts';
import type { ResolveHost } from './ssrf-guard.ts';
import type { AttemptOutcome, SettleInput, SkipReason, WebhookActivities } from './definitions.ts';

export interface WebhookActivityDeps {
  db: Knex;
  logger: Logger;
  /** Opens the webhook's secret and the delivery's body. */
  secrets: SecretBox;
  webhooks: {
    /** WEBHOOK_ALLOW_PRIVATE */
    allowPrivate: boolean;
    /** WEBHOOK_TIMEOUT_MS */
    timeoutMs: number;
    /** The resolver connections use; the system's by default (tests inject names). */
    lookup?: ResolveHost;
    /** Runs the outbox sweep; without one the sweep does nothing. */
    dispatcher?: WebhookDispatcher;
    /** Attempts by outcome class and latency, deliveries by how they ended; absent, nothing is counted. */
    metrics?: WebhookMetrics;
  };
}

/** An attempt's outcome as a bounded label: success, the receiver's status class, or the error class. */
export function attemptOutcome(
  result: Pick<DeliveryResult, 'ok' | 'status' | 'errorClass'>,
): WebhookAttemptOutcome {
  if (result.ok) return 'success';
  if (result.errorClass && result.errorClass !== 'http_status') return result.errorClass;
  const status = result.status ?? 0;
  if (status >= 300 && status < 400) return 'http_3xx';
  if (status >= 400 && status < 500) return 'http_4xx';
  if (status >= 500 && status < 600) return 'http_5xx';
  return 'http_other';
}

/** The worker's own Temporal client, for code that runs inside an activity (the approval activities' onEvent). */
export const activityTemporalClient = (): Client => Context.current().client;

const skipped = (reason: SkipReason): AttemptOutcome => ({ kind: 'skipped', reason });

/** An attempt already recorded (the activity was retried after recording it), read back instead of re-sent. */
const fromRecord = (a: DeliveryAttempt): AttemptOutcome => ({
  kind: 'attempted',
  ok: a.statusCode !== null && a.statusCode >= 200 && a.statusCode < 300,
  statusCode: a.statusCode,
  durationMs: a.durationMs,
  errorClass: a.errorClass,
  errorMessage: a.errorMessage,
  retryAfterMs: null,
  gone: a.statusCode === 410,
});

type AttemptInput = Parameters<WebhookActivities['attemptWebhookDelivery']>[0];
type AttemptOutput = ReturnType<WebhookActivities['attemptWebhookDelivery']>;

/**
 * The webhook delivery workflow's side effects. Each attempt reads the delivery and the webhook afresh (a rotated
 * secret, a changed URL or a disabled webhook counts from the next attempt), sends the stored body byte for byte
 * and records the attempt before returning; the workflow decides what follows and `settle` writes it.
 */
export function createWebhookActivities(deps: WebhookActivityDeps): WebhookActivities {
  return {
    attemptWebhookDelivery(input) {
      // Heartbeats while the receiver is called: a worker that dies mid-attempt is noticed within the round's
      // heartbeat time-out, not its start-to-close time-out.
      return whileHeartbeating(() => attemptOnce(deps, input));
    },

    settleWebhookDelivery: (input) => settle(deps, input),

    async dispatchStrandedWebhookEvents({ olderThanMs }) {
      const dispatched = (await deps.webhooks.dispatcher?.dispatchStranded({ olderThanMs })) ?? 0;
      if (dispatched > 0) deps.logger.warn({ dispatched }, 'webhook outbox sweep dispatched stranded events');
      return dispatched;
    },
  };
}

/** One attempt: sends the stored body unless this attempt is recorded already, and records it. */
async function attemptOnce(
  deps: WebhookActivityDeps,
  { deliveryId, attemptNumber }: AttemptInput,
): AttemptOutput {
  const deliveries = webhookDeliveriesStore(deps.db);
  const delivery = await deliveries.load(deliveryId);
  if (!delivery) return skipped('delivery_missing');
  if (delivery.status !== 'pending') return skipped('not_pending');
  const recorded = (await deliveries.listAttempts(deliveryId)).find((a) => a.attemptNumber === attemptNumber);
  if (recorded) return fromRecord(recorded);
  const webhook = await webhooksStore(deps.db).findWithSecret(delivery.webhookId, deps.secrets);
  if (!webhook) return skipped('webhook_missing');
  if (!webhook.active) return skipped('webhook_disabled');

  const result = await deliverOnce({
    url: webhook.url,
    event: delivery.event as WebhookEvent,
    deliveryId,
    body: openDeliveryBody(delivery, deps.secrets),
    secret: webhook.secret,
    timeoutMs: deps.webhooks.timeoutMs,
    allowPrivate: deps.webhooks.allowPrivate,
    ...(deps.webhooks.lookup ? { lookup: deps.webhooks.lookup } : {}),
  });
  deps.webhooks.metrics?.attempt(attemptOutcome(result), result.ms / 1000);
  await deliveries.recordAttempt(attemptRecord(deliveryId, attemptNumber, result));
  if (!result.ok) {
    deps.logger.info(
      {
        deliveryId,
        webhookId: webhook.id,
        attemptNumber,
        status: result.status,
        errorClass: result.errorClass,
        detail: result.detail,
        response: result.responseExcerpt,
      },
      'webhook attempt failed',
    );
  }
  return {
    kind: 'attempted',
    ok: result.ok,
    statusCode: result.status ?? null,
    durationMs: result.ms,
    errorClass: result.errorClass ?? null,
    errorMessage: result.errorMessage ?? null,
    retryAfterMs: result.retryAfterMs ?? null,
    gone: result.gone ?? false,
  };
}

/** Writes what the workflow decided after an attempt: delivered, retried later, failed, or the webhook gone. */
async function settle(
  deps: WebhookActivityDeps,
  { deliveryId, webhookId, settlement }: SettleInput,
): Promise<void> {
  const { db } = deps;
  const metrics = deps.webhooks.metrics;
  switch (settlement.kind) {
    case 'succeeded':
      await webhookDeliveriesStore(db).markSucceeded(deliveryId);
      metrics?.settled('succeeded');
      return;
    case 'retry':
      await webhookDispatchStore(db).setNextAttemptAt(deliveryId, new Date(settlement.nextAttemptAt));
      return;
    case 'failed':
      await webhookDispatchStore(db).fail(deliveryId, settlement.reason);
      metrics?.settled('failed');
      return;
    case 'gone':
      await db.transaction(async (trx) => {
        await webhooksStore(trx).disable(webhookId, settlement.reason);
        await webhookDispatchStore(trx).failPendingOfWebhook(webhookId, settlement.reason);
      });
      metrics?.settled('gone');
      deps.logger.warn({ webhookId, deliveryId }, 'webhook disabled: the receiver answered 410 Gone');
      return;
  }
}
