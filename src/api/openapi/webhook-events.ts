import { z } from 'zod';
import { USER_AGENT } from '../../features/webhooks/deliver.ts';
import {
  EVENT_DESCRIPTIONS,
  SUBSCRIBABLE_EVENTS,
  TEST_EVENT,
  type WebhookEvent,
} from '../../features/webhooks/events.ts';
import { BulkSendResource } from '../../features/bulk-sends/schemas.ts';
import { ApproverResource } from '../../features/documents/approvers-schemas.ts';
import { DocumentResource } from '../../features/documents/documents-schemas.ts';
import { Timestamp } from '../schemas/envelopes.ts';
import type { OpenApiRegistry, WebhookHeader } from './registry.ts';

/**
 * The top-level `webhooks` of the document: one POST per event Wathiq delivers, with the body the delivery carries
 * (src/webhooks/payload.ts builds it; src/features/events/document-events.ts fills `data`) and its headers
 * (src/webhooks/deliver.ts sends them), so clients get typed event payloads.
 */

/** `data.document`: the document as the Documents API returns it, plus the bearer URLs some events add. */
const EventDocument = DocumentResource.extend({
  download_url: z.url().optional().meta({
    description:
      'document.approved and document.download_rotated: the permanent URL of the signed PDF. A secret: anyone holding it downloads the file.',
  }),
  filename: z.string().optional().meta({
    description: 'document.approved and document.download_rotated: the signed PDF file name',
  }),
}).meta({
  id: 'WebhookEventDocument',
  description: 'The document as it stood when the event happened',
});

const DocumentData = z.strictObject({ document: EventDocument }).meta({ id: 'WebhookDocumentData' });
const ApproverData = z
  .strictObject({
    document: EventDocument,
    approver: ApproverResource.meta({ description: 'The approver the event is about, after the event' }),
  })
  .meta({ id: 'WebhookApproverData' });
const DelegationData = z
  .strictObject({
    document: EventDocument,
    approver: ApproverResource.meta({ description: 'Who delegated (status delegated, delegated_to_id)' }),
    delegate: ApproverResource.meta({
      description: 'The new approver, in the same place of the order (delegated_from_id)',
    }),
  })
  .meta({ id: 'WebhookDelegationData' });
const TestData = z
  .strictObject({
    webhook: z.strictObject({ id: z.uuid(), url: z.string() }),
    message: z.string(),
  })
  .meta({ id: 'WebhookTestData' });

const BulkSendData = z
  .strictObject({ bulk_send: BulkSendResource.meta({ description: 'The bulk send, as it closed' }) })
  .meta({ id: 'WebhookBulkSendData' });

/** Which `data` each event carries. */
const DATA_OF: Record<WebhookEvent, z.ZodType> = {
  'document.created': DocumentData,
  'document.sent': DocumentData,
  'approver.notified': ApproverData,
  'approver.viewed': ApproverData,
  'approver.delegated': DelegationData,
  'approver.completed': ApproverData,
  'approver.rejected': ApproverData,
  'document.approved': DocumentData,
  'document.download_rotated': DocumentData,
  'document.rejected': ApproverData,
  'document.voided': DocumentData,
  'document.expired': DocumentData,
  'document.finalization_failed': DocumentData,
  'bulk_send.completed': BulkSendData,
  'bulk_send.cancelled': BulkSendData,
  'webhook.test': TestData,
};

function eventBody(event: WebhookEvent): z.ZodType {
  const sequence =
    event === TEST_EVENT
      ? z.null().meta({ description: 'Always null: a test delivery is about no document' })
      : z.int().min(1).meta({
          description:
            "The event's place among its document's events (1, 2, 3… without gaps; 1 for a bulk send's closing event); absent only from deliveries created before events were numbered",
        });
  return z.strictObject({
    id: z.int().min(1).meta({ description: 'The delivery id, as in X-Wathiq-Delivery and webhook-id' }),
    event: z.literal(event),
    sequence: event === TEST_EVENT ? sequence : sequence.optional(),
    created_at: Timestamp.meta({ description: 'When the event happened, not when this attempt was sent' }),
    data: DATA_OF[event],
  });
}

const text = (description: string, pattern?: string): WebhookHeader => ({
  description,
  schema: { type: 'string', ...(pattern ? { pattern } : {}) },
});

/** Headers every delivery carries, the specification's and Standard Webhooks'. */
function deliveryHeaders(event: WebhookEvent): Record<string, WebhookHeader> {
  return {
    'X-Wathiq-Event': { description: 'The event name, as `event` in the body', schema: { const: event } },
    'X-Wathiq-Timestamp': text(
      'Unix time in seconds when this attempt was sent; new on every attempt',
      '^[0-9]+$',
    ),
    'X-Wathiq-Signature': text(
      '`sha256=` + lowercase hex HMAC-SHA256 of `{X-Wathiq-Timestamp}.{raw body}` keyed with the whole secret (`whsec_` included) as UTF-8 (docs/webhooks.md)',
      '^sha256=[0-9a-f]{64}$',
    ),
    'X-Wathiq-Delivery': text(
      'The delivery id, the same on every attempt; equals `id` in the body',
      '^[1-9][0-9]*$',
    ),
    'webhook-id': text('Standard Webhooks: the delivery id again', '^[1-9][0-9]*$'),
    'webhook-timestamp': text('Standard Webhooks: the same value as X-Wathiq-Timestamp', '^[0-9]+$'),
    'webhook-signature': text(
      'Standard Webhooks: `v1,` + base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{raw body}` keyed with the base64-decoded secret',
      '^v1,[A-Za-z0-9+/]+=*$',
    ),
    'User-Agent': { description: 'Who is calling', schema: { const: USER_AGENT } },
  };
}

/** `document.created` → `onDocumentCreated`: an operationId per event. */
const operationIdOf = (event: string) =>
  'on' +
  event
    .split(/[._]/)
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('');

/** Adds one webhook per event Wathiq delivers: the subscribable events and the test delivery. */
export function registerWebhookEvents(openapi: OpenApiRegistry): void {
  const events: WebhookEvent[] = [...SUBSCRIBABLE_EVENTS, TEST_EVENT];
  for (const event of events) {
    openapi.addWebhook({
      event,
      operationId: operationIdOf(event),
      summary: event,
      description: EVENT_DESCRIPTIONS[event],
      body: eventBody(event),
      headers: deliveryHeaders(event),
    });
  }
}
