import { isoTime } from '../../domain/time.ts';
import type { WebhookEvent } from './events.ts';

/**
 * The body of a delivery (docs/product-rules.md §7): `{"id", "event", "sequence", "created_at", "data"}`. It is
 * built once, stored with the delivery and sent byte for byte on every attempt, so receivers can verify it and
 * deduplicate on `id`. Deliveries run independently and can arrive out of order: `sequence` (the event's place
 * among its document's events) and `created_at` let a receiver put them back in order. Pure (no Node built-ins),
 * so workflow code may import it.
 */

export interface EventBodyInput {
  /** The delivery's numeric id: the same value as X-Wathiq-Delivery. */
  deliveryId: number;
  event: WebhookEvent;
  /** 1, 2, 3… among the events of its document; null for an event about no document (`webhook.test`). */
  sequence: number | null;
  /** When the event happened (not when it is delivered). */
  createdAt: Date | string;
  /** `{ document: {...}, approver?: {...} }` for document events; serialised as given, key order kept. */
  data: Readonly<Record<string, unknown>>;
}

export function buildEventBody({ deliveryId, event, sequence, createdAt, data }: EventBodyInput): string {
  if (!Number.isSafeInteger(deliveryId) || deliveryId < 1) {
    throw new RangeError(`deliveryId must be a positive integer, got ${deliveryId}`);
  }
  if (sequence !== null && (!Number.isSafeInteger(sequence) || sequence < 1)) {
    throw new RangeError(`sequence must be a positive integer or null, got ${sequence}`);
  }
  return JSON.stringify({ id: deliveryId, event, sequence, created_at: isoTime(createdAt), data });
}

/** The `data` of a `webhook.test` delivery: enough for a receiver to see which webhook it came from. */
export function testEventData(webhook: { id: string; url: string }): Record<string, unknown> {
  return {
    webhook: { id: webhook.id, url: webhook.url },
    message: 'This is a test delivery from Wathiq. It is signed like every other delivery.',
  };
}
