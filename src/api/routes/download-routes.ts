import Router from '@koa/router';
import { z } from 'zod';
import type { Knex } from '../../db/knex.ts';
import { documentsStore } from '../../db/stores/documents-store.ts';
import { finalFileUrl, finalFilename } from '../../documents/final-file.ts';
import { statusRefusal } from '../../documents/rules.ts';
import { AppError } from '../../errors.ts';
import { authOf, type AppState } from '../../http/context.ts';
import { IdParams, pathId } from '../route-helpers.ts';
import type { OpenApiRegistry } from '../openapi/registry.ts';
import { route } from '../openapi/route.ts';
import { isoTime } from '../../domain/time.ts';
import { ok } from '../../http/respond.ts';
import { Signature } from '../schemas/documents.ts';
import { Timestamp, envelope } from '../schemas/envelopes.ts';

export interface DownloadRouterDeps {
  db: Knex;
  config: { http: { publicBaseUrl: string } };
}

const Download = z
  .strictObject({
    download_url: z.url().meta({
      description:
        'Permanent public URL of the signed PDF: `{PUBLIC_BASE_URL}/files/{token}/{reference}.pdf`. It never expires and needs no credentials.',
    }),
    expires_at: Timestamp.meta({
      description:
        "The document's approval deadline (its `expires_at`), not an expiry of the URL, which never expires",
    }),
    filename: z.string().meta({ example: 'WQT-2026-000042.pdf' }),
    signature: Signature,
  })
  .meta({ id: 'Download' });

/** GET /documents/{id}/download (docs/product-rules.md §6). */
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
      const doc = await documentsStore(deps.db).findById(authOf(ctx).accountId, id);
      if (!doc) throw AppError.notFound('Document');
      if (doc.status !== 'approved') {
        throw AppError.conflict(statusRefusal(doc, 'only an approved document can be downloaded.'));
      }
      // Finalization stores the file before the document becomes approved, so this is only a safety net.
      if (!doc.finalToken || !doc.finalSha256) {
        throw new AppError('unavailable', 'The signed PDF of this document is not available.');
      }
      ok(ctx, {
        download_url: finalFileUrl(deps.config.http.publicBaseUrl, doc.finalToken, doc),
        expires_at: isoTime(doc.expiresAt),
        filename: finalFilename(doc),
        signature: doc.signature,
      });
    },
  );
  return router;
}
