import Router from '@koa/router';
import type { ApprovalClient } from '../../features/approval/client.ts';
import type { WriteNotices } from '../../features/approval/write-notices.ts';
import type { RecordedEventsDispatch } from '../../features/approval/act-in-database.ts';
import { handleWhatsAppNotification } from '../../features/approval/apply-whatsapp-reply.ts';
import { AppError } from '../../errors.ts';
import { parseNotification, verifyHandshake, verifyMetaSignature } from '../../whatsapp/index.ts';
import type { AppState } from '../../http/context.ts';
import type { ApiDeps } from '../../http/deps.ts';
import { parseJson, readRawBody } from '../../http/raw-body.ts';

export const WHATSAPP_WEBHOOK_PATH = '/webhooks/whatsapp';
const MAX_NOTIFICATION_BYTES = 1024 * 1024;

/**
 * Meta's webhook (docs/product-rules.md §5): the verification handshake, and notifications accepted only with a
 * valid X-Hub-Signature-256 over the raw bytes. Public: Meta does not send our API keys.
 */
export function createWhatsAppWebhookRouter(
  deps: Pick<ApiDeps, 'db' | 'config' | 'logger' | 'secrets'> & {
    approvals: ApprovalClient;
    writeNotices?: WriteNotices;
    webhooks?: RecordedEventsDispatch;
  },
): Router<AppState> {
  const router = new Router<AppState>();
  const { approvals } = deps;
  const { appSecret, verifyToken } = deps.config.whatsapp;

  router.get(WHATSAPP_WEBHOOK_PATH, (ctx) => {
    const challenge = verifyToken ? verifyHandshake(ctx.query, verifyToken) : undefined;
    if (challenge === undefined) throw new AppError('forbidden', 'Verification token mismatch');
    ctx.type = 'text/plain';
    ctx.body = challenge;
  });

  router.post(WHATSAPP_WEBHOOK_PATH, async (ctx) => {
    const raw = await readRawBody(ctx.req, MAX_NOTIFICATION_BYTES);
    if (!appSecret || !verifyMetaSignature(raw, ctx.get('x-hub-signature-256') || undefined, appSecret)) {
      throw new AppError('unauthorized', 'Invalid or missing X-Hub-Signature-256');
    }
    const outcomes = await handleWhatsAppNotification(
      {
        db: deps.db,
        approvals,
        logger: deps.logger,
        secrets: deps.secrets,
        writeNotices: deps.writeNotices,
        webhooks: deps.webhooks,
      },
      parseNotification(parseJson(raw)),
    );
    deps.logger.info({ outcomes }, 'WhatsApp notification handled');
    ctx.status = 200;
    ctx.body = { success: true, data: { received: true } };
  });

  return router;
}
