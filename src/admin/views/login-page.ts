import { CSRF_FIELD } from '../csrf.ts';
import { html } from '../../http/html.ts';
import { ADMIN_PATHS } from '../paths.ts';
import { layout, type PageContext } from './page.ts';

export interface LoginView {
  loginToken: string;
  email?: string;
  next?: string | undefined;
  /** Already translated lines; the first is the main message. */
  errors?: string[];
}

export function loginPage(page: PageContext, view: LoginView) {
  const { t } = page;
  const errors = view.errors ?? [];
  const invalid = errors.length > 0;
  const body = html`<div class="login card">
    <h1>${t('loginTitle')}</h1>
    <p class="lead">${t('loginIntro')}</p>
    ${
      invalid &&
      html`<div class="notice notice-error" role="alert" id="login-error">
        ${errors.map((line) => html`<p>${line}</p>`)}
      </div>`
    }
    <form method="post" action="${ADMIN_PATHS.login}" ${invalid ? html`aria-describedby="login-error"` : ''}>
      <input type="hidden" name="${CSRF_FIELD}" value="${view.loginToken}" />
      ${view.next && html`<input type="hidden" name="next" value="${view.next}" />`}
      <div class="field">
        <label for="email">${t('email')}</label>
        <input
          id="email"
          name="email"
          type="email"
          autocomplete="username"
          required
          maxlength="320"
          dir="ltr"
          value="${view.email ?? ''}"
          ${invalid ? html`aria-invalid="true"` : ''}
          ${view.email ? '' : html`autofocus`}
        />
      </div>
      <div class="field">
        <label for="password">${t('password')}</label>
        <input
          id="password"
          name="password"
          type="password"
          autocomplete="current-password"
          required
          maxlength="1024"
          dir="ltr"
          ${invalid ? html`aria-invalid="true" autofocus` : ''}
        />
      </div>
      <button type="submit" class="button button-primary">${t('signIn')}</button>
    </form>
  </div>`;
  return layout(page, { title: t('loginTitle'), body, switchPath: ADMIN_PATHS.login });
}
