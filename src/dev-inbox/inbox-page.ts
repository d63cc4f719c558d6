import { html, type SafeHtml } from '../http/html.ts';
import type { OutboxMessage } from './outbox.ts';

const INBOX_STYLE = html`<style>
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
</style>`;

/** One message: who it went to, its text, its link buttons and its quick replies (each a form that plays it). */
function messageItem(m: OutboxMessage): SafeHtml {
  const preview = m.preview;
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
}

/** The inbox: every message sent, newest first, and the outcome of the last reply played, if any. */
export function inboxPage(messages: readonly OutboxMessage[], notice: string): string {
  const rows = messages.map(messageItem);
  return `<!doctype html>${
    html`<html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>Wathiq · development inbox</title>
        ${INBOX_STYLE}
      </head>
      <body>
        <h1>Development inbox</h1>
        <p>
          Messages the console WhatsApp provider would have sent, newest first. Links open the approval page;
          quick replies act as the approver's WhatsApp button.
        </p>
        ${notice ? html`<p class="notice" role="status">Reply: <bdi>${notice}</bdi></p>` : ''}
        <ul>
          ${rows}
        </ul>
      </body>
    </html>`.value
  }`;
}
