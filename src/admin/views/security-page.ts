import type { SecondFactorStatus } from '../../features/accounts/second-factor.ts';
import { html, type SafeHtml } from '../../http/html.ts';
import { formatNumber } from '../i18n.ts';
import { ADMIN_PATHS } from '../paths.ts';
import { copyButton, csrfInput, layout, time, type PageContext } from './page.ts';
import { qrSvg } from './qr-svg.ts';

export interface SecurityView {
  status: SecondFactorStatus;
  /** Right after confirmation: the only time the recovery codes are ever shown. */
  recoveryCodes?: string[];
  /** What was wrong with the confirm or disable form (translated). */
  error?: string;
}

/** The base32 key in groups of four, as apps print it (they ignore the spaces). */
const grouped = (secret: string) => secret.match(/.{1,4}/g)?.join(' ') ?? secret;

function errorLine(view: SecurityView, id: string): SafeHtml {
  return html`${view.error && html`<p class="error-text" id="${id}" role="alert">${view.error}</p>`}`;
}

function offPanel(page: PageContext, csrfToken: string): SafeHtml {
  const { t } = page;
  return html`<p id="second-factor-state">${t('securityOff')}</p>
    <form method="post" action="${ADMIN_PATHS.totpStart}">
      ${csrfInput(csrfToken)}
      <button type="submit" class="button button-primary">${t('securityStart')}</button>
    </form>`;
}

function pendingPanel(
  page: PageContext,
  view: SecurityView,
  pending: { secret: string; uri: string },
  csrfToken: string,
): SafeHtml {
  const { t } = page;
  return html`<p id="second-factor-state" class="notice notice-warn">${t('securityPending')}</p>
    <ol class="plain steps">
      <li>
        <p>${t('stepScan')}</p>
        ${qrSvg(pending.uri, t('qrLabel'), 'totp-qr')}
      </li>
      <li>
        <p id="setup-key-label">${t('stepKey')}</p>
        <p><code id="totp-secret" class="setup-key" dir="ltr">${grouped(pending.secret)}</code></p>
      </li>
      <li>
        <form method="post" action="${ADMIN_PATHS.totpConfirm}">
          ${csrfInput(csrfToken)}
          <div class="field">
            <label for="confirm-code">${t('stepConfirm')}</label>
            ${errorLine(view, 'confirm-error')}
            <input
              id="confirm-code"
              name="code"
              type="text"
              class="mono"
              inputmode="numeric"
              autocomplete="one-time-code"
              required
              maxlength="64"
              dir="ltr"
              ${view.error ? html`aria-invalid="true" aria-describedby="confirm-error" autofocus` : ''}
            />
          </div>
          <button type="submit" class="button button-primary">${t('turnOn')}</button>
        </form>
      </li>
    </ol>
    <form method="post" action="${ADMIN_PATHS.totpStart}">
      ${csrfInput(csrfToken)}
      <button type="submit" class="button button-secondary">${t('startAgain')}</button>
    </form>`;
}

function recoveryPanel(page: PageContext, codes: string[]): SafeHtml {
  const { t } = page;
  return html`<section
    class="card new-key"
    id="recovery"
    aria-labelledby="recovery-heading"
    tabindex="-1"
    data-focus-on-load
  >
    <h2 id="recovery-heading">${t('recoveryHeading')}</h2>
    <p class="notice notice-warn"><strong>${t('recoveryOnce')}</strong></p>
    <div class="field">
      <label for="recovery-codes">${t('recoveryCodesLabel')}</label>
      <textarea id="recovery-codes" class="mono" dir="ltr" rows="${codes.length}" readonly spellcheck="false">
${codes.join('\n')}</textarea>
      ${copyButton(page, 'recovery-codes', t('recoveryCodesLabel'))}
    </div>
    <p class="copy-status" id="copy-status" role="status" aria-live="polite"></p>
    <p><a href="${ADMIN_PATHS.security}">${t('recoveryDone')}</a></p>
  </section>`;
}

function onPanel(
  page: PageContext,
  view: SecurityView,
  on: { since: Date; recoveryCodesLeft: number },
  csrfToken: string,
): SafeHtml {
  const { t } = page;
  const invalid = view.error ? html`aria-invalid="true" aria-describedby="disable-error"` : '';
  return html`<dl class="facts" id="second-factor-state">
      <dt>${t('securityOnSince')}</dt>
      <dd>${time(page, on.since)}</dd>
      <dt>${t('recoveryLeft')}</dt>
      <dd id="recovery-left">${formatNumber(page.locale, on.recoveryCodesLeft)}</dd>
    </dl>
    <h2 id="disable-heading">${t('disableHeading')}</h2>
    <form method="post" action="${ADMIN_PATHS.totpDisable}" aria-labelledby="disable-heading">
      ${csrfInput(csrfToken)}
      <p class="hint">${t('disableHint')}</p>
      ${errorLine(view, 'disable-error')}
      <div class="field">
        <label for="disable-code">${t('disableCodeLabel')}</label>
        <input
          id="disable-code"
          name="code"
          type="text"
          class="mono"
          autocomplete="one-time-code"
          maxlength="64"
          dir="ltr"
          ${invalid}
        />
      </div>
      <div class="field">
        <label for="disable-password">${t('disablePasswordLabel')}</label>
        <input
          id="disable-password"
          name="password"
          type="password"
          autocomplete="current-password"
          maxlength="1024"
          dir="ltr"
          ${invalid}
        />
      </div>
      <button type="submit" class="button button-danger">${t('turnOff')}</button>
    </form>`;
}

export function securityPage(page: PageContext, view: SecurityView) {
  const { t } = page;
  const csrfToken = page.account?.csrfToken ?? '';
  const { status } = view;
  const panel =
    status.state === 'off'
      ? offPanel(page, csrfToken)
      : status.state === 'pending'
        ? pendingPanel(page, view, status, csrfToken)
        : onPanel(page, view, status, csrfToken);
  const body = html`<h1>${t('securityTitle')}</h1>
    <p class="lead">${t('securityIntro')}</p>
    ${view.recoveryCodes && recoveryPanel(page, view.recoveryCodes)}
    <section class="card" aria-labelledby="second-factor-heading">
      <h2 id="second-factor-heading" class="visually-hidden">${t('securityTitle')}</h2>
      ${panel}
    </section>`;
  return layout(page, {
    title: t('securityTitle'),
    current: 'security',
    body,
    switchPath: ADMIN_PATHS.security,
  });
}
