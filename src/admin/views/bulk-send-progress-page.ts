import type { SerializedBulkSend } from '../../features/bulk-sends/serialize.ts';
import { html, type SafeHtml } from '../../http/html.ts';
import { formatDate, formatNumber, labelFor, type MessageKey } from '../i18n.ts';
import { ADMIN_PATHS } from '../paths.ts';
import { csrfInput, layout, type PageContext } from './page.ts';

const OPEN = ['queued', 'running', 'paused_for_quota'];
const COUNTS: [keyof SerializedBulkSend['counts'], MessageKey][] = [
  ['sent', 'countSent'],
  ['pending', 'countPending'],
  ['failed', 'countFailed'],
  ['invalid', 'countInvalid'],
  ['cancelled', 'countCancelled'],
  ['approved', 'countApproved'],
  ['rejected', 'countRejected'],
];

/** Rows done with: sent, failed for good, skipped or cancelled. */
export const rowsDone = (c: SerializedBulkSend['counts']) => c.sent + c.failed + c.invalid + c.cancelled;

/**
 * /admin/bulk-sends/{id}: the bulk send's status, a progress bar and its counts, kept current by the dashboard's
 * script (it reads `data-progress-url` every two seconds while the bulk send is open), the results as CSV, and
 * a cancel button while it is open.
 */
export function bulkSendProgressPage(page: PageContext, bulk: SerializedBulkSend): SafeHtml {
  const { t } = page;
  const n = (x: number) => formatNumber(page.locale, x);
  const open = OPEN.includes(bulk.status);
  const done = rowsDone(bulk.counts);
  const statusLabels = Object.fromEntries(
    ['queued', 'running', 'paused_for_quota', 'completed', 'cancelled'].map((s) => [
      `data-label-${s.replace(/_/g, '-')}`,
      labelFor(t, 'bulkStatus', s),
    ]),
  );
  return layout(page, {
    title: t('progressTitle'),
    current: 'templates',
    body: html`<h1>${t('progressTitle')}</h1>
      <section
        class="card"
        id="bulk-progress"
        ${open ? html`data-progress-url="${ADMIN_PATHS.bulkSendProgress(bulk.id)}"` : ''}
        data-of-template="${t('progressOf', { done: '{done}', total: '{total}' })}"
        ${Object.entries(statusLabels).map(([k, v]) => html` ${k}="${v}"`)}
      >
        <p>
          <span class="badge badge-${bulk.status}" data-status
            >${labelFor(t, 'bulkStatus', bulk.status)}</span
          >
        </p>
        <label for="bulk-progress-bar">${t('progressLabel')}</label>
        <progress id="bulk-progress-bar" max="${bulk.counts.rows}" value="${done}"></progress>
        <p data-progress-text>${t('progressOf', { done: n(done), total: n(bulk.counts.rows) })}</p>
        <p class="notice notice-warn" data-paused ${bulk.resumes_at ? '' : html`hidden`}>
          ${bulk.resumes_at && t('pausedUntil', { time: formatDate(page.locale, new Date(bulk.resumes_at)) })}
        </p>
        <dl class="facts">
          ${COUNTS.map(
            ([key, label]) =>
              html`<dt>${t(label)}</dt>
                <dd data-count="${key}">${n(bulk.counts[key])}</dd>`,
          )}
        </dl>
      </section>
      <p><a href="${ADMIN_PATHS.bulkSendResults(bulk.id)}" download>${t('downloadResults')}</a></p>
      ${
        open &&
        html`<form
          method="post"
          action="${ADMIN_PATHS.bulkSendCancel(bulk.id)}"
          data-confirm="${t('cancelConfirm')}"
        >
          ${csrfInput(page.account!.csrfToken)}
          <button type="submit" class="button button-danger">${t('cancelBulkSend')}</button>
        </form>`
      }`,
  });
}
