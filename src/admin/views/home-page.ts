import type { DocumentSummary, WebhookSummary } from '../../db/stores/admin-overview-store.ts';
import { DOCUMENT_STATUSES } from '../../domain/model.ts';
import { html, type SafeHtml } from '../../http/html.ts';
import { formatNumber, labelFor, type Locale } from '../i18n.ts';
import { ADMIN_PATHS } from '../paths.ts';
import { layout, time, withUserText, type PageContext } from './page.ts';

/** A section's data, or the fact that it could not be read (the page still renders the rest). */
export type Section<T> = { ok: true; value: T } | { ok: false };

export interface HomeView {
  counts: Section<Map<string, number>>;
  latest: Section<DocumentSummary[]>;
  webhooks: Section<WebhookSummary[]>;
}

export function titleIn(locale: Locale, doc: { titleAr: string; titleEn: string }): string {
  return (locale === 'ar' ? doc.titleAr : doc.titleEn) || doc.titleAr || doc.titleEn;
}

export function statusBadge(page: PageContext, prefix: string, status: string): SafeHtml {
  const cls = /^[a-z_]+$/.test(status) ? status : 'unknown';
  return html`<span class="badge badge-${cls}">${labelFor(page.t, prefix, status)}</span>`;
}

export function approversProgress(page: PageContext, doc: DocumentSummary): SafeHtml {
  if (doc.approversTotal === 0) return html`${page.t('dash')}`;
  return html`<span class="progress">
    <progress max="${doc.approversTotal}" value="${doc.approversDone}" aria-hidden="true"></progress>
    <span
      >${page.t('approversProgress', {
        done: formatNumber(page.locale, doc.approversDone),
        total: formatNumber(page.locale, doc.approversTotal),
      })}</span
    >
  </span>`;
}

function unavailable(page: PageContext): SafeHtml {
  return html`<p class="notice notice-warn">${page.t('sectionUnavailable')}</p>`;
}

function counts(page: PageContext, section: HomeView['counts']): SafeHtml {
  if (!section.ok) return unavailable(page);
  const known = new Set<string>(DOCUMENT_STATUSES);
  // Statuses added later by the documents module still show, after the known ones.
  const statuses = [...DOCUMENT_STATUSES, ...[...section.value.keys()].filter((s) => !known.has(s))];
  const total = [...section.value.values()].reduce((a, b) => a + b, 0);
  return html`<ul class="status-counts" aria-labelledby="counts-heading">
    <li class="total"><span class="count">${formatNumber(page.locale, total)}</span>${page.t('total')}</li>
    ${statuses.map(
      (s) =>
        html`<li data-status="${s}">
          <span class="count">${formatNumber(page.locale, section.value.get(s) ?? 0)}</span>
          ${labelFor(page.t, 'status', s)}
        </li>`,
    )}
  </ul>`;
}

function latest(page: PageContext, section: HomeView['latest']): SafeHtml {
  const { t } = page;
  if (!section.ok) return unavailable(page);
  if (!section.value.length) return html`<p>${t('docsNone')}</p>`;
  return html`<div class="table-wrap">
    <table>
      <caption class="visually-hidden">
        ${t('docsLatest')}
      </caption>
      <thead>
        <tr>
          <th scope="col">${t('colReference')}</th>
          <th scope="col">${t('colTitle')}</th>
          <th scope="col">${t('colStatus')}</th>
          <th scope="col">${t('colApprovers')}</th>
          <th scope="col">${t('colCreated')}</th>
        </tr>
      </thead>
      <tbody>
        ${section.value.map(
          (d) =>
            html`<tr>
              <th scope="row"><a href="${ADMIN_PATHS.document(d.id)}" dir="ltr">${d.reference}</a></th>
              <td dir="auto"><bdi>${titleIn(page.locale, d)}</bdi></td>
              <td>${statusBadge(page, 'status', d.status)}</td>
              <td>${approversProgress(page, d)}</td>
              <td>${time(page, d.createdAt)}</td>
            </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}

function lastDelivery(page: PageContext, w: WebhookSummary): SafeHtml {
  const d = w.lastDelivery;
  if (!d) return html`${page.t('noDeliveries')}`;
  return html`<code dir="ltr">${d.event}</code>
    ${statusBadge(page, 'delivery', d.status)}
    ${d.statusCode !== null && html`<span>${page.t('httpStatus', { code: d.statusCode })}</span>`}
    <br /><span>${page.t('attempts', { count: formatNumber(page.locale, d.attemptCount) })}</span> ·
    ${time(page, d.at)}`;
}

function webhooks(page: PageContext, section: HomeView['webhooks']): SafeHtml {
  const { t } = page;
  if (!section.ok) return unavailable(page);
  if (!section.value.length) return html`<p>${t('webhooksNone')}</p>`;
  return html`<div class="table-wrap">
    <table>
      <caption class="visually-hidden">
        ${t('webhooksHeading')}
      </caption>
      <thead>
        <tr>
          <th scope="col">${t('colUrl')}</th>
          <th scope="col">${t('colEvents')}</th>
          <th scope="col">${t('colStatus')}</th>
          <th scope="col">${t('colLastDelivery')}</th>
        </tr>
      </thead>
      <tbody>
        ${section.value.map(
          (w) =>
            html`<tr data-webhook-id="${w.id}">
              <th scope="row"><code dir="ltr">${w.url}</code></th>
              <td>
                <ul class="plain">
                  ${w.events.map((e) => html`<li><code dir="ltr">${e}</code></li>`)}
                </ul>
              </td>
              <td>
                ${
                  w.active
                    ? html`<span class="badge badge-ok">${t('webhookActive')}</span>`
                    : html`<span class="badge badge-off">${t('webhookDisabled')}</span>
                        ${w.disabledReason && html`<br /><span>${w.disabledReason}</span>`}`
                }
              </td>
              <td>${lastDelivery(page, w)}</td>
            </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}

export function homePage(page: PageContext, view: HomeView) {
  const { t } = page;
  const body = html`<h1>${t('homeTitle')}</h1>
    <p class="lead">${withUserText(t, 'welcome', { name: page.account?.name ?? '' })}</p>
    <section class="card" aria-labelledby="docs-heading">
      <h2 id="docs-heading">${t('docsHeading')}</h2>
      <h3 id="counts-heading" class="visually-hidden">${t('docsByStatus')}</h3>
      ${counts(page, view.counts)}
      <h3 id="latest-heading">${t('docsLatest')}</h3>
      ${latest(page, view.latest)}
    </section>
    <section class="card" aria-labelledby="webhooks-heading">
      <h2 id="webhooks-heading">${t('webhooksHeading')}</h2>
      ${webhooks(page, view.webhooks)}
    </section>`;
  return layout(page, { title: t('homeTitle'), current: 'home', body });
}
