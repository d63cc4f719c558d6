import { MAX_ATTEMPTS, nextAttemptDelay } from './retry-schedule.ts';
import type { AttemptOutcome, DeliveryQueueState, DeliveryRequest, Settlement } from '../definitions.ts';

/**
 * The delivery workflow's decisions as plain functions, free of Temporal, so unit tests call them directly:
 * which signalled rounds to take, and what to do after each attempt.
 */

export const requestKey = (r: DeliveryRequest): string => `${r.deliveryId}@${r.firstAttempt}`;

export function createQueueState(carried?: DeliveryQueueState): DeliveryQueueState {
  return { queue: [...(carried?.queue ?? [])], taken: [...(carried?.taken ?? [])] };
}

/**
 * Queues a round unless this workflow has already taken the same one: dispatch is retried by Temporal and by the
 * outbox sweep, and neither may send a delivery twice.
 */
export function enqueue(state: DeliveryQueueState, request: DeliveryRequest): DeliveryQueueState {
  const valid =
    Number.isSafeInteger(request.deliveryId) &&
    request.deliveryId > 0 &&
    Number.isSafeInteger(request.firstAttempt) &&
    request.firstAttempt > 0;
  const key = requestKey(request);
  if (!valid || state.taken.includes(key)) return state;
  return {
    queue: [...state.queue, { deliveryId: request.deliveryId, firstAttempt: request.firstAttempt }],
    taken: [...state.taken, key],
  };
}

/** Drops the round at the head of the queue once it has ended. */
export function dequeue(state: DeliveryQueueState): DeliveryQueueState {
  return { queue: state.queue.slice(1), taken: state.taken };
}

export type AttemptDecision =
  | { kind: 'done'; settlement: Settlement | null }
  | { kind: 'retry'; delayMs: number; settlement: Settlement };

export interface DecideInput {
  outcome: AttemptOutcome;
  request: DeliveryRequest;
  attemptNumber: number;
  retryScale: number;
  /** Workflow time, ms since the epoch. */
  nowMs: number;
}

/**
 * After one attempt: any 2xx ends the delivery as succeeded; 410 Gone disables the webhook; anything else waits
 * for the next step of the schedule (a Retry-After honoured within its bounds), or fails after the last attempt.
 */
export function decideAfterAttempt({
  outcome,
  request,
  attemptNumber,
  retryScale,
  nowMs,
}: DecideInput): AttemptDecision {
  if (outcome.kind === 'skipped') {
    // Not pending any more (succeeded, failed, redelivered elsewhere) or deleted with its webhook: nothing to do.
    if (outcome.reason !== 'webhook_disabled') return { kind: 'done', settlement: null };
    return {
      kind: 'done',
      settlement: {
        kind: 'failed',
        reason: 'The webhook was disabled; the delivery was not attempted again',
      },
    };
  }
  if (outcome.ok) return { kind: 'done', settlement: { kind: 'succeeded' } };
  if (outcome.gone) {
    return {
      kind: 'done',
      settlement: {
        kind: 'gone',
        reason: 'The receiver answered 410 Gone: the webhook was disabled until it is enabled again',
      },
    };
  }
  const round = attemptNumber - request.firstAttempt + 1;
  const delay = nextAttemptDelay(round, outcome.retryAfterMs ?? undefined, { scale: retryScale });
  if (delay === undefined) {
    const last = outcome.statusCode !== null ? `HTTP ${outcome.statusCode}` : (outcome.errorClass ?? 'error');
    return {
      kind: 'done',
      settlement: { kind: 'failed', reason: `All ${MAX_ATTEMPTS} attempts failed (the last: ${last})` },
    };
  }
  // A Temporal timer needs at least a millisecond.
  const delayMs = Math.max(1, delay);
  return {
    kind: 'retry',
    delayMs,
    settlement: { kind: 'retry', nextAttemptAt: new Date(nowMs + delayMs).toISOString() },
  };
}
