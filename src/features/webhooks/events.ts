/**
 * The events a webhook can subscribe to (docs/product-rules.md §3 and §7). `document.approved` is the completion
 * event; there is no `document.completed`. This module is pure data so workflow code may import it.
 */
export const SUBSCRIBABLE_EVENTS = [
  'document.created',
  'document.sent',
  'approver.notified',
  'approver.viewed',
  'approver.delegated',
  'approver.completed',
  'approver.rejected',
  'document.approved',
  'document.download_rotated',
  'document.rejected',
  'document.voided',
  'document.expired',
  'document.finalization_failed',
  'bulk_send.completed',
  'bulk_send.cancelled',
] as const;

export type SubscribableEvent = (typeof SUBSCRIBABLE_EVENTS)[number];

/** Sent only by `POST /webhooks/{id}/test`; it cannot be subscribed to. */
export const TEST_EVENT = 'webhook.test';

export type WebhookEvent = SubscribableEvent | typeof TEST_EVENT;

export const EVENT_DESCRIPTIONS: Readonly<Record<WebhookEvent, string>> = {
  'document.created': 'A document was created (POST /documents).',
  'document.sent': 'A document was sent to its approvers (POST /documents/{id}/send).',
  'approver.notified':
    "An approver's turn came and they were notified: the WhatsApp request was accepted by WhatsApp, or refused for good (data.approver.status notified; see the approval status for the notification), or not sent because the approver has notify: false. Once per approver.",
  'approver.viewed':
    'An approver opened their approval page (once per approver per document: the first view). A link preview (a HEAD request, or a chat app or site fetching the link to draw its card: WhatsApp, Facebook, Twitter, Slack, Telegram, …) is not a view.',
  'approver.delegated':
    'An approver handed their step to someone else from the approval page (the document has allow_delegation): data.approver is who delegated (status delegated, delegated_to_id, delegation_reason), data.delegate the new approver who takes the same place in the order (delegated_from_id). Once per approver.',
  'approver.rejected':
    'An approver rejected the document (data.approver.rejection_reason); document.rejected follows.',
  'approver.completed': 'An approver completed their action (sign, stamp, approve or review).',
  'document.approved': 'Every approver completed: the signed PDF is ready at its permanent download URL.',
  'document.download_rotated':
    'The permanent download URL of an approved document was replaced (POST /documents/{id}/download/rotate): data.document.download_url is the new one; the old one answers 404.',
  'document.rejected': 'An approver rejected the document; the approval ended.',
  'document.voided': 'The document was voided by its account (POST /documents/{id}/void).',
  'document.expired': 'The approval deadline (expires_at) passed before every approver completed.',
  'document.finalization_failed':
    'Every approver completed but the signed PDF could not be produced; the document stays in_progress (finalization.state "failed") until an operator retries it, and can still be voided.',
  'bulk_send.completed':
    'A bulk send made and sent every row it could (data.bulk_send with its counts; sequence 1, its only event). Its documents go on as usual.',
  'bulk_send.cancelled':
    'A bulk send was cancelled (POST /bulk-sends/{id}/cancel): rows not yet sent are not sent; documents already sent go on (data.bulk_send).',
  'webhook.test': 'A test delivery requested with POST /webhooks/{id}/test; not subscribable.',
};

export interface EventCatalogueEntry {
  event: SubscribableEvent;
  description: string;
}

/** What `GET /webhooks/events` lists: the subscribable events, in lifecycle order. */
export const EVENT_CATALOGUE: readonly EventCatalogueEntry[] = SUBSCRIBABLE_EVENTS.map((event) => ({
  event,
  description: EVENT_DESCRIPTIONS[event],
}));

export function isSubscribableEvent(name: string): name is SubscribableEvent {
  return (SUBSCRIBABLE_EVENTS as readonly string[]).includes(name);
}
