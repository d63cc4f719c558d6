import { isoTime } from '../../domain/time.ts';
import type { DeliveryAttempt, DeliveryWithAttempts } from './webhook-deliveries-store.ts';
import type { Webhook } from './webhooks-store.ts';

/** The public representations of webhooks and deliveries: never a secret, never a receiver's body. */

export function serializeWebhook(w: Webhook) {
  return {
    id: w.id,
    url: w.url,
    events: w.events,
    active: w.active,
    disabled_reason: w.disabledReason,
    created_at: isoTime(w.createdAt),
    updated_at: isoTime(w.updatedAt),
  };
}

export function serializeAttempt(a: DeliveryAttempt) {
  return {
    attempt_number: a.attemptNumber,
    started_at: isoTime(a.startedAt),
    status_code: a.statusCode,
    duration_ms: a.durationMs,
    error_class: a.errorClass,
    error_message: a.errorMessage,
  };
}

export function serializeDelivery(d: DeliveryWithAttempts, failureReason: string | null) {
  return {
    id: d.id,
    webhook_id: d.webhookId,
    event: d.event,
    status: d.status,
    attempt_count: d.attemptCount,
    last_status_code: d.lastStatusCode,
    next_attempt_at: isoTime(d.nextAttemptAt),
    completed_at: isoTime(d.completedAt),
    failure_reason: failureReason,
    created_at: isoTime(d.createdAt),
    updated_at: isoTime(d.updatedAt),
    attempts: d.attempts.map(serializeAttempt),
  };
}
