import Router from '@koa/router';
import type { Config } from '../../config.ts';
import type { SecretBox } from '../../auth/secret-box.ts';
import type { Knex } from '../../db/knex.ts';
import { AppError } from '../../errors.ts';
import type { Logger } from '../../logger.ts';
import type { WebhookDispatcher } from './dispatch.ts';
import { EVENT_CATALOGUE } from './events.ts';
import {
  createWebhook,
  deleteWebhook,
  findWebhook,
  listDeliveries,
  listWebhooks,
  redeliver,
  rotateWebhookSecret,
  updateWebhook,
  type Webhook,
} from './manage-webhooks.ts';
import { serializeWebhook } from './serialize.ts';
import { assertWebhookUrl, type ResolveHost } from './ssrf-guard.ts';
import { sendTestDelivery } from './test-delivery.ts';
import { deliveryIdOf, meta, pageOf, webhookIdOf } from './webhook-params.http.ts';
import { authOf, type AppContext, type AppState } from '../../http/context.ts';
import type { OpenApiRegistry } from '../../api/openapi/registry.ts';
import { jsonBody } from '../../api/route-helpers.ts';
import { route } from '../../api/openapi/route.ts';
import { ROUTES_DOCUMENT_EVENTS } from '../../api/openapi/scopes.ts';
import { ok, okPage } from '../../http/respond.ts';
import { envelope, pageEnvelope } from '../../api/schemas/envelopes.ts';
import {
  CreateWebhookBody,
  DeliveryIdParams,
  DeliveryResource,
  EventCatalogueResource,
  ListQuery,
  TestDeliveryResource,
  UpdateWebhookBody,
  WebhookIdParams,
  WebhookResource,
  WebhookWithSecretResource,
} from './schemas.ts';
import { z } from 'zod';
import { parseBody } from '../../http/validation.ts';

export interface WebhooksRouterDeps {
  db: Knex;
  /** Seals webhook secrets (and opens them for a test delivery). */
  secrets: SecretBox;
  config: Config;
  webhooks: WebhookDispatcher;
  logger: Logger;
  /** Resolver for the SSRF check at creation; the system's by default (tests inject names). */
  webhookResolve?: ResolveHost;
}

const TAGS = ['Webhooks'];
/**
 * The webhook endpoints of service-api.md and docs/product-rules.md §7, plus get/update/delete, the deliveries
 * listing and redelivery. Everything is scoped to the key's account: another account's webhook or delivery is a
 * 404.
 */
/** What each route of the webhooks is mounted with. */
interface Mount {
  router: Router<AppState>;
  openapi: OpenApiRegistry;
  deps: WebhooksRouterDeps;
  /** The url as it will be called, or 422 when it is, or resolves to, an address the SSRF guard refuses. */
  checkUrl: (url: string) => Promise<string>;
  /** The webhook named in the path, of the key's account, or 404. */
  load: (ctx: AppContext) => Promise<Webhook>;
}

export function createWebhooksRouter(deps: WebhooksRouterDeps, openapi: OpenApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const checkUrl = async (url: string) =>
    (
      await assertWebhookUrl(url, {
        allowPrivate: deps.config.webhooks.allowPrivate,
        ...(deps.webhookResolve ? { resolve: deps.webhookResolve } : {}),
      })
    ).href;
  const load = async (ctx: AppContext): Promise<Webhook> => {
    const webhook = await findWebhook(deps.db, authOf(ctx).accountId, webhookIdOf(ctx));
    if (!webhook) throw AppError.notFound('Webhook');
    return webhook;
  };
  const mount: Mount = { router, openapi, deps, checkUrl, load };
  mountCatalogueAndCreate(mount);
  mountWebhook(mount);
  mountDeleteAndRotate(mount);
  mountTest(mount);
  mountDeliveries(mount);
  return router;
}

function mountCatalogueAndCreate({ router, openapi, deps, checkUrl }: Mount): void {
  const { db } = deps;
  route(
    router,
    openapi,
    {
      method: 'get',
      path: '/webhooks/events',
      operationId: 'listWebhookEvents',
      summary: 'The events a webhook can subscribe to',
      tags: TAGS,
      auth: 'webhooks:read',
      responses: { 200: { description: 'The events', schema: envelope(z.array(EventCatalogueResource)) } },
    },
    (ctx) => {
      ok(ctx, EVENT_CATALOGUE);
    },
  );

  route(
    router,
    openapi,
    {
      method: 'get',
      path: '/webhooks',
      operationId: 'listWebhooks',
      summary: 'List webhooks',
      description: 'Newest first. The secret is never shown.',
      tags: TAGS,
      auth: 'webhooks:read',
      query: ListQuery,
      responses: { 200: { description: 'A page of webhooks', schema: pageEnvelope(WebhookResource) } },
      errors: [422],
    },
    async (ctx) => {
      const page = pageOf(ctx);
      const { items, total } = await listWebhooks(db, authOf(ctx).accountId, page);
      okPage(ctx, items.map(serializeWebhook), meta(page, total));
    },
  );

  route(
    router,
    openapi,
    {
      method: 'post',
      path: '/webhooks',
      operationId: 'createWebhook',
      summary: 'Create a webhook',
      description:
        'Answers with the signing secret (`data.secret`) once; it is never shown again (rotate it if lost). URLs that are, or resolve to, loopback, private, link-local, CGNAT, unique-local or metadata addresses are refused (422). Needs documents:read as well as webhooks:write: the webhook receives the documents of its events.',
      tags: TAGS,
      auth: ROUTES_DOCUMENT_EVENTS,
      body: { json: CreateWebhookBody, required: true },
      responses: {
        201: {
          description: 'The webhook with its secret',
          schema: envelope(WebhookWithSecretResource),
          headers: { Location: { description: 'The new webhook', schema: { type: 'string' } } },
        },
      },
      errors: [400, 415, 422],
    },
    async (ctx) => {
      const input = parseBody(CreateWebhookBody, jsonBody(ctx));
      const url = await checkUrl(input.url);
      const { webhook, secret } = await createWebhook(
        { db, secrets: deps.secrets },
        { accountId: authOf(ctx).accountId, url, events: input.events },
      );
      ctx.set('Location', `${ctx.path}/${webhook.id}`);
      ok(ctx, { ...serializeWebhook(webhook), secret }, 201);
    },
  );
}

function mountWebhook({ router, openapi, deps, checkUrl, load }: Mount): void {
  const { db } = deps;
  route(
    router,
    openapi,
    {
      method: 'get',
      path: '/webhooks/{id}',
      operationId: 'getWebhook',
      summary: 'Get a webhook',
      description: 'The secret is never shown.',
      tags: TAGS,
      auth: 'webhooks:read',
      pathParams: WebhookIdParams,
      responses: { 200: { description: 'The webhook', schema: envelope(WebhookResource) } },
      errors: [404],
    },
    async (ctx) => {
      ok(ctx, serializeWebhook(await load(ctx)));
    },
  );

  route(
    router,
    openapi,
    {
      method: 'put',
      path: '/webhooks/{id}',
      operationId: 'updateWebhook',
      summary: 'Change a webhook’s url, events or active flag',
      description:
        'Only the given fields change; an empty object changes nothing. `active: false` stops the webhook: its pending deliveries fail. `active: true` enables it again (after a 410 Gone disabled it); failed deliveries can then be redelivered. A new url is used from the next attempt. Needs documents:read as well as webhooks:write: the webhook receives the documents of its events.',
      tags: TAGS,
      auth: ROUTES_DOCUMENT_EVENTS,
      pathParams: WebhookIdParams,
      body: { json: UpdateWebhookBody, required: false },
      responses: { 200: { description: 'The webhook', schema: envelope(WebhookResource) } },
      errors: [400, 404, 415, 422],
    },
    async (ctx) => {
      const { accountId } = authOf(ctx);
      const current = await load(ctx);
      const id = current.id;
      const input = parseBody(UpdateWebhookBody, jsonBody(ctx));
      if (input.url === undefined && input.events === undefined && input.active === undefined) {
        ok(ctx, serializeWebhook(current)); // nothing to change: not even updated_at moves
        return;
      }
      const url = input.url === undefined ? undefined : await checkUrl(input.url);
      const updated = await updateWebhook(db, accountId, id, {
        ...(url !== undefined ? { url } : {}),
        ...(input.events !== undefined ? { events: input.events } : {}),
        ...(input.active !== undefined ? { active: input.active } : {}),
      });
      if (!updated) throw AppError.notFound('Webhook');
      ok(ctx, serializeWebhook(updated));
    },
  );
}

function mountDeleteAndRotate({ router, openapi, deps }: Mount): void {
  const { db } = deps;
  route(
    router,
    openapi,
    {
      method: 'delete',
      path: '/webhooks/{id}',
      operationId: 'deleteWebhook',
      summary: 'Delete a webhook',
      description: 'Removes the webhook with its deliveries; pending deliveries are not attempted again.',
      tags: TAGS,
      auth: 'webhooks:write',
      pathParams: WebhookIdParams,
      responses: {
        200: {
          description: 'Deleted',
          schema: envelope(z.strictObject({ id: z.uuid(), deleted: z.literal(true) })),
        },
      },
      errors: [404],
    },
    async (ctx) => {
      const id = webhookIdOf(ctx);
      if (!(await deleteWebhook(db, authOf(ctx).accountId, id))) throw AppError.notFound('Webhook');
      ok(ctx, { id, deleted: true });
    },
  );
  route(
    router,
    openapi,
    {
      method: 'post',
      path: '/webhooks/{id}/rotate-secret',
      operationId: 'rotateWebhookSecret',
      summary: 'Replace the signing secret',
      description:
        'Answers with the new secret once. The old secret stops signing at once, including retries of pending deliveries.',
      tags: TAGS,
      auth: 'webhooks:write',
      pathParams: WebhookIdParams,
      responses: {
        200: { description: 'The webhook with its new secret', schema: envelope(WebhookWithSecretResource) },
      },
      errors: [404],
    },
    async (ctx) => {
      const rotated = await rotateWebhookSecret(
        { db, secrets: deps.secrets },
        authOf(ctx).accountId,
        webhookIdOf(ctx),
      );
      if (!rotated) throw AppError.notFound('Webhook');
      ok(ctx, { ...serializeWebhook(rotated.webhook), secret: rotated.secret });
    },
  );
}

function mountTest({ router, openapi, deps }: Mount): void {
  const { db, config } = deps;
  route(
    router,
    openapi,
    {
      method: 'post',
      path: '/webhooks/{id}/test',
      operationId: 'testWebhook',
      summary: 'Send a webhook.test delivery now',
      description:
        'Sends a signed `webhook.test` delivery within this request (even to a disabled webhook) and answers with what the receiver did: its status code, never its body. The delivery is recorded with its one attempt and is not retried.',
      tags: TAGS,
      auth: 'webhooks:write',
      pathParams: WebhookIdParams,
      responses: { 200: { description: 'The outcome', schema: envelope(TestDeliveryResource) } },
      errors: [404],
    },
    async (ctx) => {
      const result = await sendTestDelivery(
        {
          db,
          secrets: deps.secrets,
          allowPrivate: config.webhooks.allowPrivate,
          timeoutMs: config.webhooks.timeoutMs,
          ...(deps.webhookResolve ? { lookup: deps.webhookResolve } : {}),
        },
        authOf(ctx).accountId,
        webhookIdOf(ctx),
      );
      if (!result) throw AppError.notFound('Webhook');
      if (!result.ok) {
        deps.logger.info(
          {
            requestId: ctx.state.requestId,
            deliveryId: result.deliveryId,
            status: result.statusCode,
            errorClass: result.errorClass,
            detail: result.detail,
          },
          'webhook test delivery failed',
        );
      }
      ok(ctx, {
        delivery_id: result.deliveryId,
        ok: result.ok,
        status_code: result.statusCode,
        duration_ms: result.durationMs,
        error_class: result.errorClass,
        error_message: result.errorMessage,
      });
    },
  );
}

function mountDeliveries({ router, openapi, deps, load }: Mount): void {
  const { db, webhooks: dispatcher } = deps;
  route(
    router,
    openapi,
    {
      method: 'get',
      path: '/webhooks/{id}/deliveries',
      operationId: 'listWebhookDeliveries',
      summary: 'Deliveries of a webhook with their attempts',
      description:
        'Newest first; each delivery lists its attempts with status code, duration and error class.',
      tags: TAGS,
      auth: 'webhooks:read',
      pathParams: WebhookIdParams,
      query: ListQuery,
      responses: { 200: { description: 'A page of deliveries', schema: pageEnvelope(DeliveryResource) } },
      errors: [404, 422],
    },
    async (ctx) => {
      const { accountId } = authOf(ctx);
      const webhook = await load(ctx);
      const page = pageOf(ctx);
      const { items, total } = await listDeliveries(db, accountId, webhook.id, page);
      okPage(ctx, items, meta(page, total));
    },
  );

  route(
    router,
    openapi,
    {
      method: 'post',
      path: '/webhooks/deliveries/{id}/redeliver',
      operationId: 'redeliverWebhookDelivery',
      summary: 'Send a delivery again',
      description:
        'Sends a succeeded or failed delivery again with the same id and the same body, on a new round of the retry schedule, after any delivery of the same document still queued for the webhook. 409 while the delivery is pending or its webhook is disabled. Needs documents:read as well as webhooks:write: the body carries the document.',
      tags: TAGS,
      auth: ROUTES_DOCUMENT_EVENTS,
      pathParams: DeliveryIdParams,
      responses: { 202: { description: 'Queued', schema: envelope(DeliveryResource) } },
      errors: [404, 409],
    },
    async (ctx) => {
      ok(ctx, await redeliver({ db, dispatcher }, authOf(ctx).accountId, deliveryIdOf(ctx)), 202);
    },
  );
}
