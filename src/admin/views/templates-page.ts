import type { TemplateWithVersion } from '../../features/templates/template-store.ts';
import type { BulkSend } from '../../features/bulk-sends/bulk-send-store.ts';
import { html, type SafeHtml } from '../../http/html.ts';
import { labelFor } from '../i18n.ts';
import { ADMIN_PATHS } from '../paths.ts';
import { titleIn } from './home-page.ts';
import { layout, time, type PageContext } from './page.ts';

/** /admin/templates: the account's templates, each with its bulk-send page, and the latest bulk sends. */
export function templatesPage(
  page: PageContext,
  view: { templates: TemplateWithVersion[]; bulkSends: BulkSend[] },
): SafeHtml {
  const { t } = page;
  const rows = view.templates.map(
    ({ template, version }) =>
      html`<tr>
        <th scope="row">${titleIn(page.locale, version)}</th>
        <td>${version.version}</td>
        <td>${version.roles.map((r) => (page.locale === 'ar' ? r.labelAr : r.labelEn)).join('، ')}</td>
        <td><a href="${ADMIN_PATHS.bulkSendNew(template.id)}">${t('bulkSendAction')}</a></td>
      </tr>`,
  );
  const recent = view.bulkSends.map(
    (b) =>
      html`<li>
        <a href="${ADMIN_PATHS.bulkSend(b.id)}">${time(page, b.createdAt)}</a>
        <span class="badge badge-${b.status}">${labelFor(t, 'bulkStatus', b.status)}</span>
      </li>`,
  );
  return layout(page, {
    title: t('templatesTitle'),
    current: 'templates',
    body: html`<h1>${t('templatesTitle')}</h1>
      <p class="lead">${t('templatesIntro')}</p>
      ${
        view.templates.length === 0
          ? html`<p>${t('templatesNone')}</p>`
          : html`<div class="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th scope="col">${t('templateTitle')}</th>
                    <th scope="col">${t('templateVersion')}</th>
                    <th scope="col">${t('templateRoles')}</th>
                    <th scope="col"><span class="visually-hidden">${t('bulkSendAction')}</span></th>
                  </tr>
                </thead>
                <tbody>
                  ${rows}
                </tbody>
              </table>
            </div>`
      }
      ${
        recent.length > 0 &&
        html`<h2>${t('recentBulkSends')}</h2>
          <ul class="plain">
            ${recent}
          </ul>`
      }`,
  });
}
