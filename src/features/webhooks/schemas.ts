import { z } from 'zod';
import { LIMITS } from '../../domain/model.ts';
import { DELIVERY_ERROR_CLASSES } from './deliver.ts';
import { SUBSCRIBABLE_EVENTS } from './events.ts';
import { MAX_WEBHOOK_URL_LENGTH } from './ssrf-guard.ts';
import { Timestamp } from '../../api/schemas/envelopes.ts';
import { integer } from '../../api/schemas/fields.ts';

/**
 * Request and response shapes of the webhook endpoints (docs/product-rules.md §7); the routes validate with these.
 */

const HOST_NAME = String.raw`(?:[A-Za-z0-9-]+\.)*[A-Za-z][A-Za-z0-9-]*\.?`;
const OCTET = String.raw`(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])`;
const URL_SHAPE = String.raw`^\s*[Hh][Tt][Tt][Pp][Ss]?://(?:${HOST_NAME}|${OCTET}(?:\.${OCTET}){3})(?::[0-9]{1,4})?(?:[/?#][^\s]*)?\s*$`;

const Url = z
  .string({ error: (iss) => (iss.input === undefined ? 'url is required' : 'url must be a string') })
  .trim()
  .min(1, { error: 'url is required' })
  .max(MAX_WEBHOOK_URL_LENGTH, { error: `url must be at most ${MAX_WEBHOOK_URL_LENGTH} characters` })
  .meta({
    description:
      'An http:// or https:// URL on the public internet (no user name or password); redirects are not followed',
    // The shape the URL parser takes (a host name or IPv4 address, an optional port, then any path and query).
    pattern: URL_SHAPE,
    example: 'https://example.com/wathiq/webhooks',
  });

const EventName = z.enum(SUBSCRIBABLE_EVENTS, {
  error: (iss) =>
    `${typeof iss.input === 'string' ? `"${iss.input}" is not` : 'each event must be'} an event you can subscribe to: ${SUBSCRIBABLE_EVENTS.join(', ')} (GET /webhooks/events)`,
});

const Events = z
  .array(EventName, {
    error: (iss) => (iss.input === undefined ? 'events is required' : 'events must be a list of event names'),
  })
  .min(1, { error: 'events must name at least one event' })
  .max(SUBSCRIBABLE_EVENTS.length * 2, { error: 'events lists an event more than twice' })
  .meta({ description: 'The events to receive; each at most once (repeats are dropped)' });

export const CreateWebhookBody = z.object({ url: Url, events: Events });

/** Only the given fields change; `{}` changes nothing (and answers the webhook as it is). */
export const UpdateWebhookBody = z.object({
  url: Url.optional(),
  events: Events.optional(),
  active: z
    .boolean({ error: 'active must be true or false' })
    .optional()
    .meta({ description: 'false stops deliveries (pending ones fail); true enables a disabled webhook' }),
});

export const ListQuery = z.object({
  page: integer('page', 1, 1_000_000).optional().meta({ description: 'Page number, from 1; default 1' }),
  per_page: integer('per_page', 1, LIMITS.perPageMax)
    .optional()
    .meta({ description: `Items per page; default ${LIMITS.perPageDefault}, at most ${LIMITS.perPageMax}` }),
});

export const WebhookIdParams = z.object({ id: z.uuid().meta({ description: 'The webhook id (UUID)' }) });
export const DeliveryIdParams = z.object({
  id: z.int().min(1).meta({ description: 'The delivery id (a number, as in X-Wathiq-Delivery)' }),
});

export const WebhookResource = z
  .strictObject({
    id: z.uuid(),
    url: z.string(),
    events: z.array(z.enum(SUBSCRIBABLE_EVENTS)),
    active: z.boolean(),
    disabled_reason: z
      .string()
      .nullable()
      .meta({ description: 'Why Wathiq disabled the webhook (a 410 Gone answer); null when active' }),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'Webhook' });

export const WebhookWithSecretResource = WebhookResource.extend({
  secret: z.string().meta({
    description: 'The signing secret (whsec_...). Shown only in this answer: store it now.',
  }),
}).meta({ id: 'WebhookWithSecret' });

export const EventCatalogueResource = z
  .strictObject({ event: z.enum(SUBSCRIBABLE_EVENTS), description: z.string() })
  .meta({ id: 'WebhookEventType' });

export const DeliveryAttemptResource = z
  .strictObject({
    attempt_number: z.int().min(1),
    started_at: Timestamp,
    status_code: z.int().nullable().meta({ description: 'The receiver’s HTTP status; null when none came' }),
    duration_ms: z.int().min(0),
    error_class: z.enum(DELIVERY_ERROR_CLASSES).nullable().meta({
      description:
        'Why the attempt failed: http_status (see status_code, 3xx included: redirects are not followed), timeout, connection_refused, connection_failed, dns, tls, blocked_address (not a public address)',
    }),
    error_message: z.string().nullable().meta({
      description: 'Wathiq’s sentence for the class; never the receiver’s body, a socket error or an address',
    }),
  })
  .meta({ id: 'WebhookDeliveryAttempt' });

export const DeliveryResource = z
  .strictObject({
    id: z.int().min(1).meta({ description: 'The delivery id: X-Wathiq-Delivery and `id` in the body' }),
    webhook_id: z.uuid(),
    event: z.string(),
    status: z.enum(['pending', 'succeeded', 'failed']),
    attempt_count: z.int().min(0),
    last_status_code: z.int().nullable(),
    next_attempt_at: Timestamp.nullable().meta({ description: 'When the next retry is due, while pending' }),
    completed_at: Timestamp.nullable(),
    failure_reason: z.string().nullable(),
    created_at: Timestamp,
    updated_at: Timestamp,
    attempts: z.array(DeliveryAttemptResource),
  })
  .meta({ id: 'WebhookDelivery' });

export const TestDeliveryResource = z
  .strictObject({
    delivery_id: z.int().min(1),
    ok: z.boolean().meta({ description: 'The receiver answered 2xx' }),
    status_code: z.int().nullable(),
    duration_ms: z.int().min(0),
    error_class: DeliveryAttemptResource.shape.error_class,
    error_message: z.string().nullable(),
  })
  .meta({ id: 'WebhookTestResult' });
