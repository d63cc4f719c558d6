import { CSRF_FIELD } from '../csrf.ts';
import { html } from '../../http/html.ts';
import { ADMIN_PATHS } from '../paths.ts';
import { layout, type PageContext } from './page.ts';

export interface CodeView {
  loginToken: string;
  /** Already translated lines; the first is the main message. */
  errors?: string[];
}

/** The second step of sign-in: one field that takes a code from the app or a recovery code. */
export function codePage(page: PageContext, view: CodeView) {
  const { t } = page;
  const errors = view.errors ?? [];
  const invalid = errors.length > 0;
  const body = html`<div class="login card">
    <h1>${t('codeTitle')}</h1>
    <p class="lead">${t('codeIntro')}</p>
    ${
      invalid &&
      html`<div class="notice notice-error" role="alert" id="code-error">
        ${errors.map((line) => html`<p>${line}</p>`)}
      </div>`
    }
    <form method="post" action="${ADMIN_PATHS.loginCode}">
      <input type="hidden" name="${CSRF_FIELD}" value="${view.loginToken}" />
      <div class="field">
        <label for="code">${t('codeLabel')}</label>
        <p class="hint" id="code-hint">${t('codeHint')}</p>
        <input
          id="code"
          name="code"
          type="text"
          class="mono"
          autocomplete="one-time-code"
          autocapitalize="characters"
          spellcheck="false"
          required
          maxlength="64"
          dir="ltr"
          aria-describedby="${invalid ? 'code-hint code-error' : 'code-hint'}"
          ${invalid ? html`aria-invalid="true"` : ''}
          autofocus
        />
      </div>
      <button type="submit" class="button button-primary">${t('verifyCode')}</button>
    </form>
    <p><a href="${ADMIN_PATHS.login}">${t('codeStartOver')}</a></p>
  </div>`;
  return layout(page, { title: t('codeTitle'), body, switchPath: ADMIN_PATHS.loginCode });
}
