import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { Knex } from '../../db/knex.ts';
import type { SecretBox } from '../../auth/secret-box.ts';
import { documentEventsStore, fullEventData, type DocumentEvent } from '../events/document-events-store.ts';
import { webhookDeliveriesStore, type WebhookDelivery } from './webhook-deliveries-store.ts';
import { webhookDispatchStore } from './webhook-dispatch-store.ts';
import { webhooksStore } from './webhooks-store.ts';
import { AppError } from '../../errors.ts';
import type { Logger } from '../../logger.ts';
import { outsideTrace } from '../../tracing/spans.ts';
import {
  DEFAULT_OUTBOX_SWEEP,
  WEBHOOK_DELIVERY_ROUND_WORKFLOW_TYPE,
  WEBHOOK_OUTBOX_SWEEP_WORKFLOW_TYPE,
  webhookDeliveryRoundWorkflowId,
  webhookOutboxSweepWorkflowId,
  type DeliveryRequest,
  type OutboxSweepInput,
  type WebhookDeliveryRoundInput,
} from './definitions.ts';
import type { webhookDeliveryRoundWorkflow } from './workflow/delivery-round-workflow.ts';
import type { webhookOutboxSweepWorkflow } from './workflow/outbox-sweep-workflow.ts';
import type { WebhookEvent } from './events.ts';
import { buildEventBody } from './payload.ts';

export interface WebhookDispatcherDeps {
  db: Knex;
  /** Opens events' bearer URLs and seals each delivery's body. */
  secrets: SecretBox;
  /** The Temporal client: the API's, or inside an activity the worker's (`activityTemporalClient`). */
  temporal: () => Client;
  taskQueue: string;
  /** WEBHOOK_RETRY_SCALE, handed to each delivery workflow. */
  retryScale: number;
  logger?: Logger;
  /** The outbox sweep's pace, used if this dispatcher is the one that starts it. */
  sweep?: OutboxSweepInput;
}

export interface DispatchSummary {
  /** Events handed to delivery by this call (the event itself and earlier ones of its document left behind). */
  events: number;
  /** Deliveries handed to their workflows (started, or found already running). */
  deliveries: number;
}

/**
 * Hands committed events to webhook delivery: for each active webhook of the account subscribed to the event, a
 * delivery row (created once per webhook and event, its body fixed now) and a workflow of its own that runs the
 * delivery's retry schedule (`webhookDeliveryRoundWorkflow`). Every step is idempotent, so a retried caller, two
 * processes racing, or the outbox sweep never send a delivery twice: the rows are unique, the workflow id is
 * derived from the delivery and its round (a second start finds the first), and an attempt is only made while
 * the delivery is pending. Deliveries do not wait for one another: the payload's `sequence` and `created_at`
 * tell the receiver the order.
 *
 * Events of one document are still handed over in the order they happened: dispatching an event first
 * dispatches the earlier events of its document that are still waiting (a process died between their commit and
 * dispatch).
 */
export function createWebhookDispatcher(deps: WebhookDispatcherDeps) {
  const { db } = deps;
  const ensureSweeper = sweeperStarter(deps);

  async function dispatchEvent(event: DocumentEvent): Promise<DispatchSummary> {
    await ensureSweeper();
    return dispatchWithEarlier(deps, event);
  }

  async function dispatchEventById(eventId: number): Promise<DispatchSummary> {
    const event = await documentEventsStore(db).findById(eventId);
    return event ? dispatchEvent(event) : { events: 0, deliveries: 0 };
  }

  return {
    /** Call once the transaction that recorded `event` has committed. Idempotent. */
    dispatchEvent,

    /** Dispatches a recorded event by id (for callers that did not keep the event). */
    dispatchEventById,

    /**
     * Hands over what one transaction recorded, once committed: the newest of `events` still awaiting delivery,
     * and before it the earlier events of its document still waiting. When none awaits (no active webhook of the
     * account subscribed to them as they were recorded), nothing is read: an account without webhooks costs no
     * statement here.
     */
    async dispatchRecorded(events: readonly DocumentEvent[]): Promise<DispatchSummary> {
      const last = events.findLast((e) => e.awaitsDispatch);
      return last ? dispatchEvent(last) : { events: 0, deliveries: 0 };
    },

    /**
     * The outbox sweep: dispatches events that were committed at least `olderThanMs` ago and never dispatched
     * (their process died, or Temporal was unreachable, right after the commit). Returns how many it took.
     */
    async dispatchStranded(options: { olderThanMs?: number; limit?: number } = {}): Promise<number> {
      const ids = await webhookDispatchStore(db).findUndispatched({
        olderThanMs: options.olderThanMs ?? 60_000,
        limit: options.limit ?? 500,
      });
      let events = 0;
      for (const id of ids) {
        try {
          events += (await dispatchEventById(id)).events;
        } catch (err) {
          deps.logger?.warn(
            { err, eventId: id },
            'could not dispatch a stranded event; the next sweep retries',
          );
        }
      }
      return events;
    },

    /**
     * `POST /webhooks/deliveries/{id}/redeliver`: reopens a finished delivery (same id, same body, its past
     * attempts kept) and starts a new round of attempts, numbered after them, in a workflow of its own.
     */
    redeliver: (accountId: string, deliveryId: number): Promise<WebhookDelivery> =>
      redeliver(deps, accountId, deliveryId),
  };
}

/**
 * The first dispatch of this process makes sure the outbox sweep runs (in a trace of its own, not the
 * dispatching request's); a failure is tried again next time.
 */
function sweeperStarter(deps: WebhookDispatcherDeps): () => Promise<void> {
  let sweeper: Promise<void> | undefined;
  return () =>
    (sweeper ??= outsideTrace(() =>
      deps.temporal().workflow.start<typeof webhookOutboxSweepWorkflow>(WEBHOOK_OUTBOX_SWEEP_WORKFLOW_TYPE, {
        workflowId: webhookOutboxSweepWorkflowId(deps.taskQueue),
        taskQueue: deps.taskQueue,
        args: [deps.sweep ?? DEFAULT_OUTBOX_SWEEP],
        workflowIdConflictPolicy: 'USE_EXISTING',
      }),
    ).then(
      () => undefined,
      (err: unknown) => {
        sweeper = undefined;
        deps.logger?.warn({ err }, 'could not start the webhook outbox sweep; the next dispatch tries again');
      },
    ));
}

/** Hands over the event and, first, the earlier events of its document still waiting. */
async function dispatchWithEarlier(
  deps: WebhookDispatcherDeps,
  event: DocumentEvent,
): Promise<DispatchSummary> {
  const { db } = deps;
  // Recorded with no webhook subscribed, or dispatched already: nothing to hand over. An earlier event of its
  // document still waiting (its process died) goes with the document's next event that has a subscriber, or
  // with the outbox sweep.
  if (!event.awaitsDispatch) return { events: 0, deliveries: 0 };
  const outbox = webhookDispatchStore(db);
  const waiting = await outbox.undispatchedUpTo(event);
  const summary: DispatchSummary = { events: 0, deliveries: 0 };
  for (const id of waiting) {
    const pending = id === event.id ? event : await documentEventsStore(db).findById(id);
    if (!pending) continue;
    summary.deliveries += await fanOut(deps, pending);
    await outbox.markDispatched(id);
    summary.events++;
  }
  return summary;
}

/** One delivery per subscribed webhook, each handed to its first round; returns how many were. */
async function fanOut(deps: WebhookDispatcherDeps, event: DocumentEvent): Promise<number> {
  const { db } = deps;
  const hooks = await webhooksStore(db).findSubscribers(event.accountId, event.event);
  let signalled = 0;
  for (const hook of hooks) {
    const { delivery } = await webhookDeliveriesStore(db).createOnce(
      {
        webhookId: hook.id,
        accountId: event.accountId,
        eventId: event.id,
        event: event.event,
        body: (deliveryId) =>
          buildEventBody({
            deliveryId,
            event: event.event as WebhookEvent,
            sequence: event.sequence,
            createdAt: event.createdAt,
            data: fullEventData(event, deps.secrets),
          }),
      },
      deps.secrets,
    );
    // Dispatched before, and already succeeded or failed: the account's redeliver is the way to send it again.
    if (delivery.status !== 'pending') continue;
    // Dispatched again while pending (the hand-over was cut short before the event was marked dispatched):
    // the same first round, so its workflow is found running (or completed) and nothing is sent twice.
    await startRound(deps, hook.id, { deliveryId: delivery.id, firstAttempt: 1 });
    signalled++;
  }
  return signalled;
}

/** Starts the workflow of one round of a delivery, unless it runs or has completed already. */
async function startRound(
  deps: WebhookDispatcherDeps,
  webhookId: string,
  request: DeliveryRequest,
): Promise<void> {
  const input: WebhookDeliveryRoundInput = {
    webhookId,
    deliveryId: request.deliveryId,
    firstAttempt: request.firstAttempt,
    retryScale: deps.retryScale,
  };
  try {
    await deps
      .temporal()
      .workflow.start<typeof webhookDeliveryRoundWorkflow>(WEBHOOK_DELIVERY_ROUND_WORKFLOW_TYPE, {
        workflowId: webhookDeliveryRoundWorkflowId(webhookId, request),
        taskQueue: deps.taskQueue,
        args: [input],
        // Running: keep it. Completed: the round is over, do not run it again. Terminated or failed (an
        // operator stopped it): start it afresh; attempts already recorded are read back, not re-sent.
        workflowIdConflictPolicy: 'USE_EXISTING',
        workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
      });
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return;
    throw err;
  }
}

/** Reopens a finished delivery of an active webhook and starts its next round; a round that cannot start fails it. */
async function redeliver(
  deps: WebhookDispatcherDeps,
  accountId: string,
  deliveryId: number,
): Promise<WebhookDelivery> {
  const { db } = deps;
  const deliveries = webhookDeliveriesStore(db);
  const existing = await deliveries.findById(accountId, deliveryId);
  if (!existing) throw AppError.notFound('Delivery');
  const pendingConflict = () =>
    AppError.conflict(
      'delivery_pending',
      `Delivery ${deliveryId} is pending: its attempts are still running; redeliver it once it has succeeded or failed`,
    );
  if (existing.status === 'pending') throw pendingConflict();
  const webhook = await webhooksStore(db).findById(accountId, existing.webhookId);
  if (!webhook) throw AppError.notFound('Delivery');
  if (!webhook.active) {
    throw AppError.conflict(
      'webhook_disabled',
      `Webhook ${webhook.id} is disabled; enable it with PUT /webhooks/${webhook.id} and {"active": true} first`,
    );
  }
  const reopened = await deliveries.reopen(accountId, deliveryId);
  if (!reopened) {
    // Reopened by a concurrent redelivery since it was read: one round at a time.
    if (await deliveries.findById(accountId, deliveryId)) throw pendingConflict();
    throw AppError.notFound('Delivery');
  }
  const outbox = webhookDispatchStore(db);
  await outbox.clearFailureReason(deliveryId);
  try {
    await startRound(deps, existing.webhookId, { deliveryId, firstAttempt: reopened.nextAttemptNumber });
  } catch (err) {
    // Not left pending with nobody working on it: the account can simply try again.
    await outbox.fail(deliveryId, 'The redelivery could not be queued; redeliver again');
    throw err;
  }
  return reopened.delivery;
}

export type WebhookDispatcher = ReturnType<typeof createWebhookDispatcher>;
