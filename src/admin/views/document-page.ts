import type { ApproverSummary, DocumentDetail } from '../../db/stores/admin-overview-store.ts';
import type { CcRecipient } from '../../domain/model.ts';
import { html, type SafeHtml } from '../../http/html.ts';
import { labelFor } from '../i18n.ts';
import { ADMIN_PATHS } from '../paths.ts';
import { approversProgress, statusBadge } from './home-page.ts';
import { layout, time, withUserText, type PageContext } from './page.ts';

function approverName(page: PageContext, a: ApproverSummary): string {
  return (page.locale === 'ar' ? a.nameAr : a.nameEn) || a.nameAr || a.nameEn;
}

function approverRole(page: PageContext, a: ApproverSummary): string {
  return (page.locale === 'ar' ? a.roleAr : a.roleEn) ?? a.roleAr ?? a.roleEn ?? page.t('dash');
}

/** "delegated to …" under the status of an approver who delegated (issue 15 item 3). */
function delegatedTo(page: PageContext, a: ApproverSummary, approvers: ApproverSummary[]): SafeHtml | '' {
  const to = a.delegatedToId ? approvers.find((d) => d.id === a.delegatedToId) : undefined;
  return to
    ? html`<br /><small dir="auto"
          >${withUserText(page.t, 'delegatedTo', { name: approverName(page, to) })}</small
        >`
    : '';
}

function approversTable(page: PageContext, approvers: ApproverSummary[]): SafeHtml {
  const { t } = page;
  if (!approvers.length) return html`<p>${t('noApprovers')}</p>`;
  return html`<div class="table-wrap">
    <table>
      <caption class="visually-hidden">
        ${t('approversHeading')}
      </caption>
      <thead>
        <tr>
          <th scope="col">${t('colOrder')}</th>
          <th scope="col">${t('colName')}</th>
          <th scope="col">${t('colRole')}</th>
          <th scope="col">${t('colPhone')}</th>
          <th scope="col">${t('colAction')}</th>
          <th scope="col">${t('colStatus')}</th>
          <th scope="col">${t('colActedAt')}</th>
        </tr>
      </thead>
      <tbody>
        ${approvers.map(
          (a) =>
            html`<tr>
              <td>${a.orderIndex}</td>
              <th scope="row" dir="auto"><bdi>${approverName(page, a)}</bdi></th>
              <td dir="auto"><bdi>${approverRole(page, a)}</bdi></td>
              <td><span dir="ltr">+${a.phone}</span></td>
              <td>${labelFor(t, 'action', a.actionType)}</td>
              <td>${statusBadge(page, 'approver', a.status)}${delegatedTo(page, a, approvers)}</td>
              <td>${time(page, a.actedAt)}</td>
            </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}

/** The document's cc recipients (issue 15 item 5): who gets the signed PDF besides the approvers. */
function ccTable(page: PageContext, cc: CcRecipient[]): SafeHtml {
  const { t } = page;
  if (!cc.length) return html`<p id="cc-none">${t('noCc')}</p>`;
  return html`<p>${t('ccIntro')}</p>
    <div class="table-wrap">
      <table id="cc-recipients">
        <caption class="visually-hidden">
          ${t('ccHeading')}
        </caption>
        <thead>
          <tr>
            <th scope="col">${t('colPhone')}</th>
            <th scope="col">${t('colName')}</th>
            <th scope="col">${t('colLanguage')}</th>
          </tr>
        </thead>
        <tbody>
          ${cc.map(
            (c) =>
              html`<tr>
                <td><span dir="ltr">+${c.phone}</span></td>
                <td dir="auto">${c.name ? html`<bdi>${c.name}</bdi>` : t('dash')}</td>
                <td>${t(c.language ? `ccLanguage.${c.language}` : 'ccLanguage.auto')}</td>
              </tr>`,
          )}
        </tbody>
      </table>
    </div>`;
}

/** One document, read-only: its facts, its approvers' progress and who gets a copy (cc). */
export function documentPage(page: PageContext, doc: DocumentDetail, approvers: ApproverSummary[]) {
  const { t } = page;
  const title = t('documentTitle', { reference: doc.reference });
  const body = html`<p><a href="${ADMIN_PATHS.home}">${t('backToOverview')}</a></p>
    <h1>${title}</h1>
    <section class="card" aria-labelledby="facts-heading">
      <h2 id="facts-heading" class="visually-hidden">${title}</h2>
      <dl class="facts">
        <dt>${t('fieldStatus')}</dt>
        <dd>${statusBadge(page, 'status', doc.status)}</dd>
        <dt>${t('fieldTitleAr')}</dt>
        <dd lang="ar" dir="rtl"><bdi>${doc.titleAr}</bdi></dd>
        <dt>${t('fieldTitleEn')}</dt>
        <dd lang="en" dir="ltr"><bdi>${doc.titleEn}</bdi></dd>
        <dt>${t('fieldWorkflow')}</dt>
        <dd>${labelFor(t, 'workflow', doc.workflowType)}</dd>
        <dt>${t('fieldDepartment')}</dt>
        <dd>${doc.department ?? t('dash')}</dd>
        <dt>${t('colApprovers')}</dt>
        <dd>${approversProgress(page, doc)}</dd>
        <dt>${t('fieldCreated')}</dt>
        <dd>${time(page, doc.createdAt)}</dd>
        <dt>${t('fieldSent')}</dt>
        <dd>${time(page, doc.sentAt)}</dd>
        <dt>${t('fieldExpires')}</dt>
        <dd>${time(page, doc.expiresAt)}</dd>
        <dt>${t('fieldCompleted')}</dt>
        <dd>${time(page, doc.completedAt)}</dd>
        ${
          doc.rejectionReason &&
          html`<dt>${t('fieldRejection')}</dt>
            <dd dir="auto"><bdi>${doc.rejectionReason}</bdi></dd>`
        }
      </dl>
    </section>
    <section class="card" aria-labelledby="approvers-heading">
      <h2 id="approvers-heading">${t('approversHeading')}</h2>
      ${approversTable(page, approvers)}
    </section>
    <section class="card" aria-labelledby="cc-heading">
      <h2 id="cc-heading">${t('ccHeading')}</h2>
      ${ccTable(page, doc.cc)}
    </section>`;
  return layout(page, { title, current: 'home', body });
}
