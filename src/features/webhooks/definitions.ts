import { defineQuery, defineSignal } from '@temporalio/workflow';

/**
 * The webhook delivery workflows' contract, shared by the workflows, their activities and the dispatcher.
 *
 * Each round of attempts of one delivery (one event to one webhook) is a workflow of its own,
 * `webhookDeliveryRoundWorkflow`, running the retry schedule on durable timers: a retry waiting five hours
 * survives restarts of every process, and a receiver that keeps refusing one event delays no other. Payloads carry
 * `sequence` and `created_at` so receivers can order what arrives out of order (docs/webhooks.md).
 */
export const WEBHOOK_DELIVERY_ROUND_WORKFLOW_TYPE = 'webhookDeliveryRoundWorkflow';

/**
 * The workflow id of one round: derived from the delivery and the round's first attempt, so dispatching the same
 * round again (an activity retry, two processes, the outbox sweep) finds the workflow already there, while a
 * redelivery (a new round, numbered after the recorded attempts) gets a workflow of its own. The webhook's id (a
 * random UUID) comes first because delivery ids are a database's serial numbers: two databases on one Temporal
 * namespace (a staging copy, every test file) would otherwise find each other's rounds and deliver nothing.
 */
export function webhookDeliveryRoundWorkflowId(webhookId: string, request: DeliveryRequest): string {
  return `webhook-${webhookId}-delivery-${request.deliveryId}-from-${request.firstAttempt}`;
}

export interface WebhookDeliveryRoundInput {
  webhookId: string;
  deliveryId: number;
  /** 1 for a new delivery; the next free attempt number for a redelivery. */
  firstAttempt: number;
  /** Multiplies every retry delay (WEBHOOK_RETRY_SCALE): 1 in production, tiny in tests. */
  retryScale: number;
}

/** The attempt in progress or waiting for its timer (null once the round has ended). */
export type DeliveryRoundView = {
  deliveryId: number;
  attemptNumber: number;
  nextAttemptAt: string | null;
} | null;

export const deliveryRoundQuery = defineQuery<DeliveryRoundView>('deliveryRound');

// ---- The previous design, kept registered so workflows started by it finish (no new dispatch uses it) ----

/**
 * One workflow per (webhook, document) that took that document's deliveries one at a time, in order. New
 * deliveries no longer go there (a refused event held every later event of its document back); the type stays
 * registered, unchanged, so queues started before the change drain and complete.
 */
export const WEBHOOK_DELIVERY_WORKFLOW_TYPE = 'webhookDeliveryWorkflow';

/** Where a delivery is queued: its document's queue, or one of its own when it has no document (webhook.test). */
export type DeliveryScope = { documentId: string } | { eventId: number } | { deliveryId: number };

export function webhookDeliveryWorkflowId(webhookId: string, scope: DeliveryScope): string {
  if ('documentId' in scope) return `webhook-${webhookId}-document-${scope.documentId}`;
  if ('eventId' in scope) return `webhook-${webhookId}-event-${scope.eventId}`;
  return `webhook-${webhookId}-delivery-${scope.deliveryId}`;
}

/** One round of attempts of one delivery. */
export interface DeliveryRequest {
  deliveryId: number;
  /**
   * The attempt number the round starts at: 1 for a new delivery, the next free number for a redelivery (its
   * past attempts are kept). The schedule counts from the round's first attempt.
   */
  firstAttempt: number;
}

export interface DeliveryQueueState {
  /** Rounds waiting, the first one in progress. */
  queue: DeliveryRequest[];
  /** Keys of every round ever queued in this workflow (see `requestKey`): a repeated signal is ignored. */
  taken: string[];
}

export interface WebhookDeliveryWorkflowInput {
  webhookId: string;
  /** Multiplies every retry delay (WEBHOOK_RETRY_SCALE): 1 in production, tiny in tests. */
  retryScale: number;
  /** How long the workflow waits for another delivery once its queue is empty before it completes. */
  idleMs?: number;
  /** The queue carried over continue-as-new. */
  carried?: DeliveryQueueState;
}

export const DEFAULT_IDLE_MS = 5 * 60 * 1000;

export const enqueueDeliverySignal = defineSignal<[DeliveryRequest]>('enqueueDelivery');

export interface DeliveryQueueView {
  queued: DeliveryRequest[];
  /** The attempt in progress or waiting for its timer. */
  current: { deliveryId: number; attemptNumber: number; nextAttemptAt: string | null } | null;
}

export const deliveryQueueQuery = defineQuery<DeliveryQueueView>('deliveryQueue');

/**
 * The outbox sweep: one long-lived workflow per task queue that, every `intervalMs`, dispatches events committed
 * more than `strandedAfterMs` ago and never dispatched (their process died between the commit and the dispatch).
 * Started by the first dispatch of any process (`workflowIdConflictPolicy: USE_EXISTING`).
 */
export const WEBHOOK_OUTBOX_SWEEP_WORKFLOW_TYPE = 'webhookOutboxSweepWorkflow';
export const webhookOutboxSweepWorkflowId = (taskQueue: string): string =>
  `webhook-outbox-sweep-${taskQueue}`;

export interface OutboxSweepInput {
  intervalMs: number;
  strandedAfterMs: number;
}

export const DEFAULT_OUTBOX_SWEEP: OutboxSweepInput = { intervalMs: 60_000, strandedAfterMs: 60_000 };

// ---- Activities (the workflow imports these types only) ----

export interface AttemptInput {
  deliveryId: number;
  attemptNumber: number;
}

export type SkipReason = 'delivery_missing' | 'not_pending' | 'webhook_missing' | 'webhook_disabled';

export type AttemptOutcome =
  | {
      kind: 'attempted';
      ok: boolean;
      statusCode: number | null;
      durationMs: number;
      errorClass: string | null;
      errorMessage: string | null;
      /** From Retry-After on a 429 or 503. */
      retryAfterMs: number | null;
      /** The receiver answered 410 Gone. */
      gone: boolean;
    }
  | { kind: 'skipped'; reason: SkipReason };

/** What the workflow decided after an attempt; `settleWebhookDelivery` writes it. */
export type Settlement =
  | { kind: 'succeeded' }
  | { kind: 'retry'; nextAttemptAt: string }
  | { kind: 'failed'; reason: string }
  /** Disables the webhook and ends every pending delivery of it. */
  | { kind: 'gone'; reason: string };

export interface SettleInput {
  deliveryId: number;
  webhookId: string;
  settlement: Settlement;
}

export interface WebhookActivities {
  /** One HTTP attempt, recorded before it returns; never throws for what the receiver did. */
  attemptWebhookDelivery(input: AttemptInput): Promise<AttemptOutcome>;
  settleWebhookDelivery(input: SettleInput): Promise<void>;
  /** The outbox sweep; returns how many events it dispatched. */
  dispatchStrandedWebhookEvents(input: { olderThanMs: number }): Promise<number>;
}
