import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import type { AppState } from '../../http/context.ts';
import { withLogContext, type Logger } from '../../logger.ts';

/** A caller's X-Request-Id is kept when it is this: short, and nothing a log or header could be bent by. */
const ACCEPTABLE = /^[A-Za-z0-9._:-]{1,128}$/;

/** The caller's X-Request-Id when it is sane (1 to 128 of A-Z a-z 0-9 . _ : -), otherwise a new UUID. */
export function acceptRequestId(given: string | undefined): string {
  return given !== undefined && ACCEPTABLE.test(given) ? given : randomUUID();
}

const DOCUMENT_PATH =
  /^\/api\/v1\/documents\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(?:\/|$)/i;

/** The document a public API path names (`/api/v1/documents/{id}…`), if any. */
export function documentIdOfPath(path: string): string | undefined {
  return DOCUMENT_PATH.exec(path)?.[1]?.toLowerCase();
}

/**
 * Echoes a caller's X-Request-Id when it is sane, otherwise makes one; every response carries it. Every log line
 * written while the request runs carries it as `request_id` (and `document_id` when the path names a document or
 * a route finds one), and one line records the request when it ends. Path tokens are redacted by the logger.
 */
export function requestId(logger?: Logger): Middleware<AppState> {
  return async (ctx, next) => {
    const id = acceptRequestId(ctx.get('x-request-id') || undefined);
    ctx.state.requestId = id;
    ctx.set('X-Request-Id', id);
    const documentId = documentIdOfPath(ctx.path);
    const context = documentId ? { request_id: id, document_id: documentId } : { request_id: id };
    // Below `info` (as the benchmarks and quiet deployments run) the line is not built at all: its fields and the
    // clock reading are allocations every request would make for nothing.
    const access = logger?.isLevelEnabled('info') ? logger : undefined;
    const started = access ? process.hrtime.bigint() : 0n;
    await withLogContext(context, async () => {
      try {
        await next();
      } finally {
        access?.info(
          {
            method: ctx.method,
            url: ctx.originalUrl,
            status: ctx.status,
            duration_ms: Number((process.hrtime.bigint() - started) / 1000n) / 1000,
          },
          'request',
        );
      }
    });
  };
}
