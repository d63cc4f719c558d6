import { randomBytes } from 'node:crypto';
import Router from '@koa/router';
import { html } from '../http/html.ts';
import type { ApprovalClient } from '../approval/client.ts';
import { handleWhatsAppNotification } from '../approval/apply-whatsapp-reply.ts';
import type { AppState } from '../http/context.ts';
import type { ApiDeps } from '../http/deps.ts';
import { readRawBody } from '../http/raw-body.ts';
import { openPayload, whatsAppMessagesStore } from '../db/stores/whatsapp-messages-store.ts';
import { AppError } from '../errors.ts';
import type { MessagePreview } from '../whatsapp/index.ts';

/**
 * Whether a Host header names this machine by a name no one else can point elsewhere. A page of another site can
 * have its own name resolve to 127.0.0.1 (DNS rebinding) and then read the inbox as a same-origin page, but its
 * requests still carry its own name in Host.
 */
export function isLoopbackHost(host: string): boolean {
  return /^(?:localhost|127(?:\.\d{1,3}){3}|\[::1\])(?::\d{1,5})?$/i.test(host);
}

interface StoredPayload {
  preview?: MessagePreview;
  link_token?: string;
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
    const messages = await whatsAppMessagesStore(deps.db).listOutbox({ limit: 100 });
    const notice = typeof ctx.query.result === 'string' ? ctx.query.result : '';
    const rows = messages.map((m) => {
      const p = (openPayload(m, deps.secrets) ?? {}) as StoredPayload;
      const preview = p.preview;
      const dir = preview?.language === 'ar' ? 'rtl' : 'ltr';
      return html`<li class="msg" dir="${dir}">
        <p class="meta" dir="ltr">
          #${m.id} · to <bdi>+${m.phone}</bdi> · ${m.kind} · ${m.status ?? 'pending'} ·
          ${m.createdAt.toISOString()}
        </p>
        <p class="text"><bdi>${preview?.text ?? ''}</bdi></p>
        <div class="buttons">
          ${(preview?.buttons ?? []).map((b) =>
            b.type === 'url'
              ? html`<a class="button" href="/a/${b.suffix}" target="_blank" rel="noopener">${b.label}</a>`
              : html`<form method="post" action="/dev/inbox/reply">
                  <input type="hidden" name="message_id" value="${m.id}" />
                  <input type="hidden" name="payload" value="${b.payload}" />
                  <button type="submit">${b.label}</button>
                </form>`,
          )}
        </div>
      </li>`;
    });
    ctx.type = 'text/html';
    ctx.set('Cache-Control', 'no-store');
    ctx.body = `<!doctype html>${
      html`<html lang="en">
        <head>
          <meta charset="utf-8" />
          <meta name="viewport" content="width=device-width, initial-scale=1" />
          <title>Wathiq · development inbox</title>
          <style>
            body {
              font:
                15px/1.5 system-ui,
                sans-serif;
              max-width: 760px;
              margin: 1rem auto;
              padding: 0 1rem;
              background: #eef3ee;
            }
            .msg {
              list-style: none;
              background: #fff;
              border-radius: 10px;
              padding: 0.75rem 1rem;
              margin: 0.75rem 0;
              box-shadow: 0 1px 2px #0002;
            }
            .meta {
              color: #667;
              font-size: 0.85rem;
              margin: 0;
            }
            .text {
              white-space: pre-wrap;
            }
            .buttons {
              display: flex;
              gap: 0.5rem;
              flex-wrap: wrap;
            }
            .button,
            button {
              font: inherit;
              padding: 0.4rem 0.8rem;
              border: 1px solid #0b6e4f;
              border-radius: 6px;
              background: #fff;
              color: #0b6e4f;
              text-decoration: none;
              cursor: pointer;
            }
            ul {
              padding: 0;
            }
            .notice {
              background: #fff8d6;
              padding: 0.5rem 1rem;
              border-radius: 6px;
            }
          </style>
        </head>
        <body>
          <h1>Development inbox</h1>
          <p>
            Messages the console WhatsApp provider would have sent, newest first. Links open the approval
            page; quick replies act as the approver's WhatsApp button.
          </p>
          ${notice ? html`<p class="notice" role="status">Reply: <bdi>${notice}</bdi></p>` : ''}
          <ul>
            ${rows}
          </ul>
        </body>
      </html>`.value
    }`;
  });

  router.post('/reply', async (ctx) => {
    const form = new URLSearchParams((await readRawBody(ctx.req, 16 * 1024)).toString('utf8'));
    const messageId = Number(form.get('message_id'));
    const payload = form.get('payload') ?? '';
    const [message] = (
      await whatsAppMessagesStore(deps.db).listOutbox({ limit: 1, beforeId: messageId + 1 })
    ).filter((m) => m.id === messageId);
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
