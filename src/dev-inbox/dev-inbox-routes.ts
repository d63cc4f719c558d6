import { randomBytes } from 'node:crypto';
import Router from '@koa/router';
import type { ApprovalClient } from '../features/approval/client.ts';
import { handleWhatsAppNotification } from '../features/approval/apply-whatsapp-reply.ts';
import type { AppState } from '../http/context.ts';
import type { ApiDeps } from '../http/deps.ts';
import { readRawBody } from '../http/raw-body.ts';
import { AppError } from '../errors.ts';
import { inboxPage } from './inbox-page.ts';
import { findOutboxMessage, listOutbox } from './outbox.ts';

/**
 * Whether a Host header names this machine by a name no one else can point elsewhere. A page of another site can
 * have its own name resolve to 127.0.0.1 (DNS rebinding) and then read the inbox as a same-origin page, but its
 * requests still carry its own name in Host.
 */
export function isLoopbackHost(host: string): boolean {
  return /^(?:localhost|127(?:\.\d{1,3}){3}|\[::1\])(?::\d{1,5})?$/i.test(host);
}

/**
 * The development inbox (docs/product-rules.md §5): every message Wathiq "sent", with its text, its link and its
 * buttons. Tapping a quick reply goes through the same code as a real WhatsApp button reply, so one person can play
 * every approver from one browser; and so can anyone who reaches it. createApp mounts it only with the console
 * WhatsApp provider, never in production, and only on a server that listens on loopback (devToolsAllowed).
 */
export function createDevInboxRouter(
  deps: Pick<ApiDeps, 'db' | 'config' | 'logger' | 'secrets'> & { approvals: ApprovalClient },
): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/dev/inbox' });
  const { approvals } = deps;

  router.use(async (ctx, next) => {
    if (!isLoopbackHost(ctx.get('host'))) {
      throw new AppError(
        'forbidden',
        'The development inbox answers only when addressed as localhost, 127.0.0.1 or [::1]',
      );
    }
    await next();
  });

  router.get('/', async (ctx) => {
    const messages = await listOutbox(deps, 100);
    const notice = typeof ctx.query.result === 'string' ? ctx.query.result : '';
    ctx.type = 'text/html';
    ctx.set('Cache-Control', 'no-store');
    ctx.body = inboxPage(messages, notice);
  });

  router.post('/reply', async (ctx) => {
    const form = new URLSearchParams((await readRawBody(ctx.req, 16 * 1024)).toString('utf8'));
    const messageId = Number(form.get('message_id'));
    const payload = form.get('payload') ?? '';
    const message = await findOutboxMessage(deps, messageId);
    if (!message) throw AppError.notFound('Message');
    const outcomes = await handleWhatsAppNotification(
      { db: deps.db, approvals, logger: deps.logger, secrets: deps.secrets },
      {
        statuses: [],
        ignored: 0,
        replies: [
          {
            wamid: `wamid.dev.${randomBytes(12).toString('hex')}`,
            from: message.phone,
            timestamp: new Date(),
            payload,
            source: 'button',
            ...(message.wamid ? { contextWamid: message.wamid } : {}),
          },
        ],
      },
    );
    ctx.redirect(
      `/dev/inbox?result=${encodeURIComponent(outcomes.map((o) => o.result + (o.detail ? ` (${o.detail})` : '')).join(', '))}`,
    );
  });

  return router;
}
