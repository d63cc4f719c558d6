import Router from '@koa/router';
import type { Config } from '../../config.ts';
import type { Knex } from '../../db/knex.ts';
import { LIMITS } from '../../domain/model.ts';
import { AppError } from '../../errors.ts';
import { authOf, type AppState } from '../../http/context.ts';
import { ok, okPage } from '../../http/respond.ts';
import { parseBody } from '../../http/validation.ts';
import type { Logger } from '../../logger.ts';
import type { TemporalClientHandle } from '../../temporal/client.ts';
import type { WebhookDispatcher } from '../webhooks/dispatch.ts';
import type { OpenApiRegistry } from '../../api/openapi/registry.ts';
import { route } from '../../api/openapi/route.ts';
import { CHANGES_AND_SHOWS_DOCUMENTS } from '../../api/openapi/scopes.ts';
import { IdParams, pathId } from '../../api/route-helpers.ts';
import { envelope, pageEnvelope } from '../../api/schemas/envelopes.ts';
import { readBulkSendBody } from './bulk-send-body.http.ts';
import { bulkSendRowsPage, findBulkSendView, listBulkSendViews } from './bulk-send-views.ts';
import { cancelBulkSend } from './cancel-bulk-send.ts';
import { createBulkSendClient, type BulkSendClient } from './client.ts';
import { createBulkSend } from './create-bulk-send.ts';
import {
  BulkSendCreated,
  BulkSendJsonShape,
  BulkSendMultipart,
  BulkSendResource,
  BulkSendRowResource,
  PageQuery,
} from './schemas.ts';
import { serializeBulkSend } from './serialize.ts';
import { boolean } from '../../api/schemas/fields.ts';

export interface BulkSendsRouterDeps {
  db: Knex;
  config: Config;
  logger: Logger;
  temporal: TemporalClientHandle;
  webhooks: WebhookDispatcher;
}

const TAGS = ['Bulk sends'];
const SkipInvalid = boolean('skip_invalid').optional();

const pageOf = (query: unknown) => {
  const q = parseBody(PageQuery, query);
  const page = q.page ?? 1;
  const perPage = q.per_page ?? LIMITS.perPageDefault;
  return { page, perPage, limit: perPage, offset: (page - 1) * perPage };
};
const metaOf = (page: number, perPage: number, total: number) => ({
  current_page: page,
  per_page: perPage,
  total,
  last_page: Math.max(1, Math.ceil(total / perPage)),
});

/** What each route of the bulk sends is mounted with. */
interface Mount {
  router: Router<AppState>;
  openapi: OpenApiRegistry;
  deps: BulkSendsRouterDeps;
  bulkSends: BulkSendClient;
}

/** The bulk send as the API shows it, or 404. */
async function viewOf(db: Knex, accountId: string, id: string) {
  const found = await findBulkSendView(db, accountId, id);
  if (!found) throw AppError.notFound('Bulk send');
  return found.view;
}

/** POST /templates/{id}/bulk-sends; GET /bulk-sends, /bulk-sends/{id}, /bulk-sends/{id}/rows; cancel. */
export function createBulkSendsRouter(deps: BulkSendsRouterDeps, openapi: OpenApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const bulkSends = createBulkSendClient({
    client: () => deps.temporal.client,
    taskQueue: deps.config.temporal.taskQueue,
    settings: deps.config.bulkSends,
  });
  const mount: Mount = { router, openapi, deps, bulkSends };
  mountCreate(mount);
  mountReads(mount);
  mountCancel(mount);
  return router;
}

function mountCreate({ router, openapi, deps, bulkSends }: Mount): void {
  const { db } = deps;
  const settings = deps.config.bulkSends;
  route(
    router,
    openapi,
    {
      method: 'post',
      path: '/templates/{id}/bulk-sends',
      operationId: 'createBulkSend',
      summary: 'Send a template to many people',
      description: `One document per row, made from the template's current version and sent, paced against WhatsApp's limits. Rows as JSON {rows: [{<role key>: {…}}, …]} or a CSV file (multipart part "file"), at most ${settings.maxRows} rows and BULK_SEND_MAX_MB. Every row is checked before anything is sent: any bad row is a 422 whose details name it as rows.<n>.<field> (row 1 is the first data row; a CSV header is not a row), unless skip_invalid is true: then bad rows are skipped and reported (invalid_rows) and the rest go. Needs documents:read as well: the template's content goes to the phones given.`,
      tags: TAGS,
      auth: CHANGES_AND_SHOWS_DOCUMENTS,
      pathParams: IdParams,
      body: { json: BulkSendJsonShape, multipart: BulkSendMultipart, required: true },
      responses: {
        201: {
          description: 'The bulk send, queued',
          schema: envelope(BulkSendCreated),
          headers: { Location: { description: 'The bulk send', schema: { type: 'string' } } },
        },
      },
      errors: [400, 404, 409, 413, 415, 422, 503],
    },
    async (ctx) => {
      const { accountId } = authOf(ctx);
      const templateId = pathId(ctx, 'id', 'Template');
      const body = await readBulkSendBody(ctx, settings.maxBytes);
      const skip = SkipInvalid.safeParse(body.skipInvalid);
      if (!skip.success) body.details.skip_invalid = ['skip_invalid must be true or false'];
      if (Object.keys(body.details).length) throw AppError.validation(body.details);
      const created = await createBulkSend(
        { db, bulkSends, settings },
        { accountId, templateId, source: body.source, skipInvalid: skip.data ?? false },
      );
      ctx.set(
        'Location',
        `${ctx.path.replace(/\/templates\/[^/]+\/bulk-sends\/?$/, '/bulk-sends')}/${created.bulkSend.id}`,
      );
      ok(
        ctx,
        {
          ...serializeBulkSend(created.bulkSend, created.counts),
          invalid_rows: created.invalid.map((r) => ({ row: r.number, errors: r.errors! })),
        },
        201,
      );
    },
  );
}

function mountReads({ router, openapi, deps }: Mount): void {
  const { db } = deps;
  route(
    router,
    openapi,
    {
      method: 'get',
      path: '/bulk-sends',
      operationId: 'listBulkSends',
      summary: 'List bulk sends',
      description: 'Newest first.',
      tags: TAGS,
      auth: 'documents:read',
      query: PageQuery,
      responses: { 200: { description: 'A page of bulk sends', schema: pageEnvelope(BulkSendResource) } },
      errors: [422],
    },
    async (ctx) => {
      const { accountId } = authOf(ctx);
      const { page, perPage, limit, offset } = pageOf(ctx.query);
      const { items, total } = await listBulkSendViews(db, accountId, { limit, offset });
      okPage(ctx, items, metaOf(page, perPage, total));
    },
  );

  route(
    router,
    openapi,
    {
      method: 'get',
      path: '/bulk-sends/{id}',
      operationId: 'getBulkSend',
      summary: 'Get a bulk send: status, counts, resumes_at',
      tags: TAGS,
      auth: 'documents:read',
      pathParams: IdParams,
      responses: { 200: { description: 'The bulk send', schema: envelope(BulkSendResource) } },
      errors: [404],
    },
    async (ctx) => ok(ctx, await viewOf(db, authOf(ctx).accountId, pathId(ctx, 'id', 'Bulk send'))),
  );

  route(
    router,
    openapi,
    {
      method: 'get',
      path: '/bulk-sends/{id}/rows',
      operationId: 'listBulkSendRows',
      summary: "A bulk send's rows: row number, status, document or errors",
      tags: TAGS,
      auth: 'documents:read',
      pathParams: IdParams,
      query: PageQuery,
      responses: {
        200: { description: 'A page of rows, in row order', schema: pageEnvelope(BulkSendRowResource) },
      },
      errors: [404, 422],
    },
    async (ctx) => {
      const { accountId } = authOf(ctx);
      const id = pathId(ctx, 'id', 'Bulk send');
      const { page, perPage, limit, offset } = pageOf(ctx.query);
      const found = await bulkSendRowsPage(db, accountId, id, { limit, offset });
      if (!found) throw AppError.notFound('Bulk send');
      okPage(ctx, found.rows, metaOf(page, perPage, found.total));
    },
  );
}

function mountCancel({ router, openapi, deps, bulkSends }: Mount): void {
  const { db } = deps;
  route(
    router,
    openapi,
    {
      method: 'post',
      path: '/bulk-sends/{id}/cancel',
      operationId: 'cancelBulkSend',
      summary: 'Cancel a bulk send',
      description:
        'Rows not yet sent are not sent (a draft already made for one stays a draft); documents already sent go on. Emits bulk_send.cancelled. 409 once completed or cancelled.',
      tags: TAGS,
      auth: 'documents:write',
      pathParams: IdParams,
      responses: { 200: { description: 'The cancelled bulk send', schema: envelope(BulkSendResource) } },
      errors: [404, 409],
    },
    async (ctx) => {
      const { accountId } = authOf(ctx);
      const bulk = await cancelBulkSend(
        { db, bulkSends, webhooks: deps.webhooks, logger: deps.logger },
        { accountId, id: pathId(ctx, 'id', 'Bulk send') },
      );
      ok(ctx, await viewOf(db, accountId, bulk.id));
    },
  );
}
