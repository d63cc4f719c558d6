import { html } from '../../http/html.ts';
import type { MessageKey } from '../i18n.ts';
import { ADMIN_PATHS } from '../paths.ts';
import { layout, type PageContext } from './page.ts';

const TITLES: Record<number, MessageKey> = {
  400: 'errorTitle.400',
  403: 'errorTitle.403',
  404: 'errorTitle.404',
  405: 'errorTitle.405',
  413: 'errorTitle.413',
  500: 'errorTitle.500',
};

export function errorPage(page: PageContext, status: number, message: string) {
  const { t } = page;
  const title = t(TITLES[status] ?? 'errorTitle.500');
  const body = html`<div class="card">
    <h1>${title}</h1>
    <p>${message}</p>
    <p>
      ${
        page.account
          ? html`<a href="${ADMIN_PATHS.home}">${t('goToOverview')}</a>`
          : html`<a href="${ADMIN_PATHS.login}">${t('goToLogin')}</a>`
      }
    </p>
  </div>`;
  return layout(page, { title, body });
}
