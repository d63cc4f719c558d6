import { describe, expect, it } from 'vitest';
import { RETRY_DELAYS_MS } from '../../src/features/webhooks/workflow/retry-schedule.ts';
import {
  webhookDeliveryRoundWorkflowId,
  type AttemptOutcome,
} from '../../src/features/webhooks/definitions.ts';
import {
  createQueueState,
  decideAfterAttempt,
  dequeue,
  enqueue,
} from '../../src/features/webhooks/workflow/delivery-queue.ts';

type Attempted = Extract<AttemptOutcome, { kind: 'attempted' }>;
const failed = (statusCode: number | null, extra: Partial<Attempted> = {}): Attempted => ({
  kind: 'attempted',
  ok: false,
  statusCode,
  durationMs: 3,
  errorClass: statusCode === null ? 'connection_refused' : 'http_status',
  errorMessage: null,
  retryAfterMs: null,
  gone: false,
  ...extra,
});
const succeeded: AttemptOutcome = { ...failed(204), ok: true, errorClass: null };
const NOW = Date.parse('2026-11-22T09:41:00Z');

describe('the delivery queue', () => {
  it('keeps signalled rounds in order and ignores a round it has already taken', () => {
    let s = createQueueState();
    s = enqueue(s, { deliveryId: 7, firstAttempt: 1 });
    s = enqueue(s, { deliveryId: 8, firstAttempt: 1 });
    s = enqueue(s, { deliveryId: 7, firstAttempt: 1 }); // a retried dispatch
    expect(s.queue).toEqual([
      { deliveryId: 7, firstAttempt: 1 },
      { deliveryId: 8, firstAttempt: 1 },
    ]);
    s = dequeue(s);
    s = enqueue(s, { deliveryId: 7, firstAttempt: 1 }); // still taken once it has ended
    expect(s.queue).toEqual([{ deliveryId: 8, firstAttempt: 1 }]);
    s = enqueue(s, { deliveryId: 7, firstAttempt: 3 }); // a redelivery is a new round
    expect(s.queue.map((r) => r.deliveryId)).toEqual([8, 7]);
  });

  it('refuses malformed requests and survives continue-as-new', () => {
    let s = createQueueState();
    s = enqueue(s, { deliveryId: 0, firstAttempt: 1 });
    s = enqueue(s, { deliveryId: 5, firstAttempt: 0 });
    expect(s.queue).toEqual([]);
    s = enqueue(s, { deliveryId: 5, firstAttempt: 1 });
    const carried = createQueueState(JSON.parse(JSON.stringify(s)) as typeof s);
    expect(enqueue(carried, { deliveryId: 5, firstAttempt: 1 })).toEqual(carried);
  });
});

describe('decideAfterAttempt', () => {
  const decide = (outcome: AttemptOutcome, attemptNumber = 1, firstAttempt = 1, retryScale = 1) =>
    decideAfterAttempt({
      outcome,
      request: { deliveryId: 1, firstAttempt },
      attemptNumber,
      retryScale,
      nowMs: NOW,
    });

  it('ends on any 2xx', () => {
    expect(decide(succeeded)).toEqual({ kind: 'done', settlement: { kind: 'succeeded' } });
  });

  it('disables the webhook on 410 Gone, without retrying', () => {
    const d = decide(failed(410, { gone: true }));
    expect(d.kind).toBe('done');
    expect(d.settlement?.kind).toBe('gone');
  });

  it('follows the schedule, attempt by attempt, then fails after the eighth', () => {
    for (let attempt = 1; attempt < 8; attempt++) {
      const d = decide(failed(500), attempt);
      expect(d).toEqual({
        kind: 'retry',
        delayMs: RETRY_DELAYS_MS[attempt],
        settlement: {
          kind: 'retry',
          nextAttemptAt: new Date(NOW + RETRY_DELAYS_MS[attempt]!).toISOString(),
        },
      });
    }
    expect(decide(failed(500), 8)).toEqual({
      kind: 'done',
      settlement: { kind: 'failed', reason: 'All 8 attempts failed (the last: HTTP 500)' },
    });
    expect(decide(failed(null), 8).settlement).toEqual({
      kind: 'failed',
      reason: 'All 8 attempts failed (the last: connection_refused)',
    });
  });

  it('counts a redelivery’s round from its first attempt', () => {
    expect(decide(failed(503), 9, 9)).toMatchObject({ kind: 'retry', delayMs: 5_000 });
    expect(decide(failed(503), 16, 9).kind).toBe('done');
  });

  it('honours Retry-After within the schedule’s bounds, and scales every delay', () => {
    expect(decide(failed(429, { retryAfterMs: 60_000 }))).toMatchObject({ delayMs: 60_000 });
    expect(decide(failed(429, { retryAfterMs: 1_000 }))).toMatchObject({ delayMs: 5_000 });
    expect(decide(failed(503, { retryAfterMs: 86_400_000 }))).toMatchObject({ delayMs: 36_000_000 });
    expect(decide(failed(429, { retryAfterMs: 60_000 }), 1, 1, 0.001)).toMatchObject({ delayMs: 60 });
    // A timer needs at least a millisecond.
    expect(decide(failed(500), 1, 1, 0.00001)).toMatchObject({ delayMs: 1 });
  });

  it('does nothing for a delivery that is no longer pending, and fails it when its webhook was disabled', () => {
    expect(decide({ kind: 'skipped', reason: 'not_pending' })).toEqual({ kind: 'done', settlement: null });
    expect(decide({ kind: 'skipped', reason: 'delivery_missing' })).toEqual({
      kind: 'done',
      settlement: null,
    });
    expect(decide({ kind: 'skipped', reason: 'webhook_disabled' })).toMatchObject({
      kind: 'done',
      settlement: { kind: 'failed' },
    });
  });
});

describe('delivery round workflow ids', () => {
  const HOOK = '5f0c6a8e-2b1d-4c3e-9a7f-1d2e3f4a5b6c';
  const OTHER_HOOK = '0b7e1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d';
  it('are the same for the same round (a repeated dispatch finds it) and differ per delivery and per round', () => {
    const first = webhookDeliveryRoundWorkflowId(HOOK, { deliveryId: 42, firstAttempt: 1 });
    expect(first).toBe(`webhook-${HOOK}-delivery-42-from-1`);
    expect(webhookDeliveryRoundWorkflowId(HOOK, { deliveryId: 42, firstAttempt: 1 })).toBe(first);
    expect(webhookDeliveryRoundWorkflowId(HOOK, { deliveryId: 42, firstAttempt: 9 })).toBe(
      `webhook-${HOOK}-delivery-42-from-9`,
    );
    expect(webhookDeliveryRoundWorkflowId(HOOK, { deliveryId: 421, firstAttempt: 1 })).not.toBe(first);
  });

  it('differ for the same delivery number of another database’s webhook', () => {
    expect(webhookDeliveryRoundWorkflowId(OTHER_HOOK, { deliveryId: 42, firstAttempt: 1 })).not.toBe(
      webhookDeliveryRoundWorkflowId(HOOK, { deliveryId: 42, firstAttempt: 1 }),
    );
  });
});
