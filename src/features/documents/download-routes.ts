import { CHANGES_AND_SHOWS_DOCUMENTS } from '../../api/openapi/scopes.ts';
import Router from '@koa/router';
import { z } from 'zod';
import type { Knex } from '../../db/knex.ts';
import type { SecretBox } from '../../auth/secret-box.ts';
import { currentDownload, downloadOf } from './download.ts';
import { rotateDownload } from './rotate-download.ts';
import type { Logger } from '../../logger.ts';
import type { WebhookDispatcher } from '../webhooks/dispatch.ts';
import { authOf, type AppState } from '../../http/context.ts';
import { IdParams, pathId } from '../../api/route-helpers.ts';
import type { OpenApiRegistry } from '../../api/openapi/registry.ts';
import { route } from '../../api/openapi/route.ts';
import { ok } from '../../http/respond.ts';
import { Signature } from './documents-schemas.ts';
import { Timestamp, envelope } from '../../api/schemas/envelopes.ts';

export interface DownloadRouterDeps {
  db: Knex;
  secrets: SecretBox;
  config: { http: { publicBaseUrl: string } };
  webhooks: Pick<WebhookDispatcher, 'dispatchEvent'>;
  logger: Logger;
}

const serviceDeps = (deps: DownloadRouterDeps) => ({
  db: deps.db,
  secrets: deps.secrets,
  publicBaseUrl: deps.config.http.publicBaseUrl,
});

const Download = z
  .strictObject({
    download_url: z.url().meta({
      description:
        'Permanent public URL of the signed PDF: `{PUBLIC_BASE_URL}/files/{token}/{reference}.pdf`. It never expires and needs no credentials; POST /documents/{id}/download/rotate replaces it.',
    }),
    expires_at: Timestamp.meta({
      description:
        "The document's approval deadline (its `expires_at`), not an expiry of the URL, which never expires",
    }),
    filename: z.string().meta({ example: 'WQT-2026-000042.pdf' }),
    signature: Signature,
  })
  .meta({ id: 'Download' });

/** GET /documents/{id}/download (docs/product-rules.md §6), and POST /documents/{id}/download/rotate. */
export function createDownloadRouter(deps: DownloadRouterDeps, openapi: OpenApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  route(
    router,
    openapi,
    {
      method: 'get',
      path: '/documents/{id}/download',
      operationId: 'downloadDocument',
      summary: 'Get the permanent URL of the signed PDF',
      description:
        'Only for an approved document; any other status is 409, naming it. The URL is public and permanent; `expires_at` is the approval deadline.',
      tags: ['Documents'],
      auth: 'documents:read',
      pathParams: IdParams,
      responses: { 200: { description: 'Where the signed PDF is', schema: envelope(Download) } },
      errors: [404, 409, 503],
    },
    async (ctx) => {
      const id = pathId(ctx, 'id', 'Document');
      ok(ctx, await currentDownload(serviceDeps(deps), authOf(ctx).accountId, id));
    },
  );

  route(
    router,
    openapi,
    {
      method: 'post',
      path: '/documents/{id}/download/rotate',
      operationId: 'rotateDocumentDownload',
      summary: 'Replace the permanent URL of the signed PDF',
      description:
        'For a URL that leaked: the signed PDF gets a new permanent URL, and the old one answers 404 from this answer on. Records the event document.download_rotated (with the new URL). Only for an approved document; any other status is 409, naming it.',
      tags: ['Documents'],
      auth: CHANGES_AND_SHOWS_DOCUMENTS,
      pathParams: IdParams,
      responses: { 200: { description: 'The new URL of the signed PDF', schema: envelope(Download) } },
      errors: [404, 409, 503],
    },
    async (ctx) => {
      const id = pathId(ctx, 'id', 'Document');
      const { document, downloadUrl, event } = await rotateDownload(
        serviceDeps(deps),
        authOf(ctx).accountId,
        id,
      );
      // Committed: the answer is the new URL whatever the hand-over does; a lost one goes out with the outbox sweep.
      await deps.webhooks
        .dispatchEvent(event)
        .catch((err: unknown) =>
          deps.logger.warn({ err, documentId: document.id }, 'document.download_rotated not dispatched yet'),
        );
      ok(ctx, downloadOf(document, downloadUrl));
    },
  );
  return router;
}
