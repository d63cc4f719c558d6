import Router from '@koa/router';
import type { Knex } from '../../db/knex.ts';
import { publicFinalFile } from './download.ts';
import { FILES_PREFIX } from './final-file.ts';
import { AppError, errorEnvelope } from '../../errors.ts';
import { addToLogContext, type Logger } from '../../logger.ts';
import type { Storage } from '../../storage/storage.ts';
import { ifRangeHolds, noneMatch, parseRange } from '../../api/byte-range.ts';
import type { AppState } from '../../http/context.ts';

export interface FilesRouterDeps {
  db: Knex;
  storage: Storage;
  logger: Logger;
}

/**
 * `GET|HEAD /files/{token}/{reference}.pdf`: the signed final PDF, to anyone holding the URL, while the document is
 * approved and the token is its current one (docs/product-rules.md §6; POST /documents/{id}/download/rotate
 * replaces it). Only the holder's own browser may cache the file
 * (`private`), and it asks again each time (`no-cache`, answered 304 by the SHA-256 ETag), so a shared cache never
 * keeps a contract and a replaced URL stops working at once; ranges let viewers such as pdf.js fetch it piece by
 * piece.
 */
export function createFilesRouter(deps: FilesRouterDeps): Router<AppState> {
  const router = new Router<AppState>({ prefix: FILES_PREFIX });

  router.get('/:token/:filename', async (ctx) => {
    const { token, filename } = ctx.params as { token: string; filename: string };
    const found = await publicFinalFile(deps.db, token, filename);
    if (found) addToLogContext({ document_id: found.documentId });
    const file = found?.file;
    if (!file) throw AppError.notFound('File');
    const stat = await deps.storage.stat(file.key);
    if (!stat) {
      deps.logger.error({ documentId: found.documentId, key: file.key }, 'final PDF missing from storage');
      throw AppError.notFound('File');
    }

    const etag = `"${file.sha256}"`;
    ctx.set('ETag', etag);
    ctx.set('Cache-Control', 'private, no-cache');
    ctx.set('Accept-Ranges', 'bytes');
    if (noneMatch(ctx.get('If-None-Match') || undefined, etag)) {
      ctx.status = 304;
      return;
    }
    const rangeHeader = ifRangeHolds(ctx.get('If-Range') || undefined, etag)
      ? ctx.get('Range') || undefined
      : undefined;
    const range = parseRange(rangeHeader, stat.size);
    if (range.kind === 'unsatisfiable') {
      ctx.status = 416;
      ctx.set('Content-Range', `bytes */${stat.size}`);
      ctx.body = errorEnvelope(
        new AppError('range_not_satisfiable', `Range not satisfiable: the file has ${stat.size} bytes`),
      );
      return;
    }
    ctx.set('Content-Type', 'application/pdf');
    ctx.set('Content-Disposition', `inline; filename="${file.filename}"`);
    ctx.set('X-Content-Type-Options', 'nosniff');
    const [start, end] = range.kind === 'partial' ? [range.start, range.end] : [0, stat.size - 1];
    ctx.status = range.kind === 'partial' ? 206 : 200;
    if (range.kind === 'partial') ctx.set('Content-Range', `bytes ${start}-${end}/${stat.size}`);
    if (ctx.method === 'HEAD') {
      ctx.length = end - start + 1;
      return;
    }
    const body =
      range.kind === 'partial'
        ? await deps.storage.getRange(file.key, start, end)
        : await deps.storage.get(file.key);
    if (!body) throw AppError.notFound('File');
    ctx.body = body;
    ctx.length = end - start + 1;
  });

  return router;
}
