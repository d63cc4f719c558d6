import { API_SCOPES, type ApiScope } from '../../auth/api-key-format.ts';
import type { Plan } from '../../domain/plans.ts';
import type { ApiKey } from '../../features/accounts/api-keys-store.ts';
import { html, type SafeHtml } from '../../http/html.ts';
import { VERIFICATIONS } from '../../domain/model.ts';
import { formatNumber, type MessageKey } from '../i18n.ts';
import { ADMIN_PATHS } from '../paths.ts';
import { copyButton, csrfInput, layout, time, withUserText, type PageContext } from './page.ts';

export interface NewKeyForm {
  name: string;
  scopes: readonly ApiScope[];
  /** `limit`: the account already has as many active keys as it may. */
  errors: { name?: string; scopes?: string; limit?: string };
}

/** The embed origins form: the text as typed (one origin a line) and what is wrong with it. */
export interface EmbedForm {
  value: string;
  /** Markup: it may quote the origin as typed, in a `<bdi>` (withUserText). */
  error?: SafeHtml;
}

/** The account defaults form: the fields as typed, and what is wrong with each. */
export interface DefaultsForm {
  firstAfterHours: string;
  everyHours: string;
  max: string;
  verification: string;
  errors: Partial<Record<'reminders' | 'first_after_hours' | 'every_hours' | 'max' | 'verification', string>>;
}

export interface KeysView {
  embed: EmbedForm;
  defaults: DefaultsForm;
  plan: Plan;
  requestsPerMinute: number;
  keys: ApiKey[];
  form: NewKeyForm;
  /** Right after creation: the only time the secret is ever shown. */
  created?: { name: string; key: string; secret: string };
}

/** The public key id is not secret, but a prefix is enough to recognise a key and keeps the table narrow. */
export function keyPrefix(key: string): string {
  return `${key.slice(0, 11)}…`;
}

function copyField(page: PageContext, id: string, label: string, value: string): SafeHtml {
  return html`<div class="field">
    <label for="${id}">${label}</label>
    <div class="copy-row">
      <input
        id="${id}"
        type="text"
        class="mono"
        dir="ltr"
        readonly
        value="${value}"
        spellcheck="false"
        autocomplete="off"
      />
      ${copyButton(page, id, label)}
    </div>
  </div>`;
}

function createdPanel(page: PageContext, created: NonNullable<KeysView['created']>): SafeHtml {
  const { t } = page;
  return html`<section
    class="card new-key"
    id="new-key"
    aria-labelledby="new-key-heading"
    tabindex="-1"
    data-focus-on-load
  >
    <h2 id="new-key-heading">${withUserText(t, 'newKeyHeading', { name: created.name })}</h2>
    <p class="notice notice-warn"><strong>${t('newKeyOnce')}</strong></p>
    ${copyField(page, 'new-key-id', t('newKeyKey'), created.key)}
    ${copyField(page, 'new-key-secret', t('newKeySecret'), created.secret)}
    ${copyField(page, 'new-key-header', t('newKeyHeader'), `Authorization: Bearer ${created.key}:${created.secret}`)}
    <p class="copy-status" id="copy-status" role="status" aria-live="polite"></p>
  </section>`;
}

function keysTable(page: PageContext, keys: ApiKey[], csrfToken: string): SafeHtml {
  const { t } = page;
  if (!keys.length) return html`<p>${t('keysNone')}</p>`;
  const row = (k: ApiKey) =>
    html`<tr class="${k.revokedAt ? 'revoked' : ''}" data-key-id="${k.id}">
      <th scope="row" dir="auto"><bdi>${k.name}</bdi></th>
      <td><code dir="ltr">${keyPrefix(k.key)}</code></td>
      <td>
        <ul class="plain">
          ${k.scopes.map((s) => html`<li><code dir="ltr">${s}</code></li>`)}
        </ul>
      </td>
      <td>${time(page, k.createdAt)}</td>
      <td>${time(page, k.lastUsedAt, t('never'))}</td>
      <td>
        ${
          k.revokedAt
            ? html`<span class="badge badge-off">${t('keyRevoked')}</span><br />${time(page, k.revokedAt)}`
            : html`<span class="badge badge-ok">${t('keyActive')}</span>`
        }
      </td>
      <td>
        ${
          !k.revokedAt &&
          html`<form
            method="post"
            action="${ADMIN_PATHS.revokeKey(k.id)}"
            data-confirm="${t('revokeConfirm')}"
          >
            ${csrfInput(csrfToken)}
            <button
              type="submit"
              class="button button-danger"
              aria-label="${t('revokeKeyNamed', { name: k.name })}"
            >
              ${t('revoke')}
            </button>
          </form>`
        }
      </td>
    </tr>`;
  return html`<div class="table-wrap">
    <table>
      <caption class="visually-hidden">
        ${t('keysListHeading')}
      </caption>
      <thead>
        <tr>
          <th scope="col">${t('colName')}</th>
          <th scope="col">${t('colKey')}</th>
          <th scope="col">${t('colScopes')}</th>
          <th scope="col">${t('colCreated')}</th>
          <th scope="col">${t('colLastUsed')}</th>
          <th scope="col">${t('colStatus')}</th>
          <th scope="col">${t('colActions')}</th>
        </tr>
      </thead>
      <tbody>
        ${keys.map(row)}
      </tbody>
    </table>
  </div>`;
}

function createForm(page: PageContext, form: NewKeyForm, csrfToken: string): SafeHtml {
  const { t } = page;
  const { errors } = form;
  const messages = [errors.limit, errors.name, errors.scopes].filter((m): m is string => !!m);
  const nameDescribedBy = ['key-name-hint', errors.name ? 'key-name-error' : ''].join(' ').trim();
  const scopesDescribedBy = ['scopes-hint', errors.scopes ? 'scopes-error' : ''].join(' ').trim();
  return html`<form method="post" action="${ADMIN_PATHS.createKey}">
    ${csrfInput(csrfToken)}
    ${
      messages.length > 0 &&
      html`<div class="notice notice-error" role="alert">
        <p>${t('errorSummary')}</p>
        <ul>
          ${messages.map((m) => html`<li>${m}</li>`)}
        </ul>
      </div>`
    }
    <div class="field">
      <label for="key-name">${t('keyName')}</label>
      <p class="hint" id="key-name-hint">${t('keyNameHint')}</p>
      ${errors.name && html`<p class="error-text" id="key-name-error">${errors.name}</p>`}
      <input
        id="key-name"
        name="name"
        type="text"
        required
        maxlength="255"
        autocomplete="off"
        dir="auto"
        value="${form.name}"
        aria-describedby="${nameDescribedBy}"
        ${errors.name ? html`aria-invalid="true" autofocus` : ''}
      />
    </div>
    <fieldset aria-describedby="${scopesDescribedBy}" ${errors.scopes ? html`aria-invalid="true"` : ''}>
      <legend>${t('scopesLegend')}</legend>
      <p class="hint" id="scopes-hint">${t('scopesHint')}</p>
      ${errors.scopes && html`<p class="error-text" id="scopes-error">${errors.scopes}</p>`}
      ${API_SCOPES.map((scope) => {
        const id = `scope-${scope.replace(':', '-')}`;
        return html`<div class="checkbox">
          <input
            type="checkbox"
            id="${id}"
            name="scopes"
            value="${scope}"
            ${form.scopes.includes(scope) ? html`checked` : ''}
          />
          <label for="${id}">${t(`scope.${scope}`)} <code dir="ltr">${scope}</code></label>
        </div>`;
      })}
    </fieldset>
    <button type="submit" class="button button-primary">${t('createKey')}</button>
  </form>`;
}

function embedForm(page: PageContext, form: EmbedForm, csrfToken: string): SafeHtml {
  const { t } = page;
  const describedBy = ['embed-hint', form.error ? 'embed-error' : ''].join(' ').trim();
  return html`<form method="post" action="${ADMIN_PATHS.embedOrigins}">
    ${csrfInput(csrfToken)}
    <div class="field">
      <label for="embed-origins">${t('embedLabel')}</label>
      <p class="hint" id="embed-hint">${t('embedHint')}</p>
      ${form.error && html`<p class="error-text" id="embed-error" role="alert">${form.error}</p>`}
      <textarea
        id="embed-origins"
        name="embed_origins"
        rows="4"
        dir="ltr"
        class="mono"
        spellcheck="false"
        autocomplete="off"
        aria-describedby="${describedBy}"
        ${form.error ? html`aria-invalid="true" autofocus` : ''}
      >
${form.value}</textarea>
    </div>
    <button type="submit" class="button button-primary">${t('saveEmbed')}</button>
  </form>`;
}

function numberField(
  page: PageContext,
  id: string,
  name: string,
  label: MessageKey,
  value: string,
  error: string | undefined,
): SafeHtml {
  return html`<div class="field">
    <label for="${id}">${page.t(label)}</label>
    ${error && html`<p class="error-text" id="${id}-error">${error}</p>`}
    <input
      id="${id}"
      name="${name}"
      type="number"
      inputmode="numeric"
      min="0"
      step="1"
      dir="ltr"
      value="${value}"
      ${error ? html`aria-invalid="true" aria-describedby="${id}-error"` : ''}
    />
  </div>`;
}

function defaultsForm(page: PageContext, form: DefaultsForm, csrfToken: string): SafeHtml {
  const { t } = page;
  const { errors } = form;
  return html`<form method="post" action="${ADMIN_PATHS.defaults}">
    ${csrfInput(csrfToken)}
    <p class="hint" id="defaults-hint">${t('defaultsHint')}</p>
    <fieldset aria-describedby="defaults-hint" ${errors.reminders ? html`aria-invalid="true"` : ''}>
      <legend>${t('remindersLegend')}</legend>
      ${errors.reminders && html`<p class="error-text" role="alert">${errors.reminders}</p>`}
      ${numberField(page, 'remind-first', 'first_after_hours', 'remindFirstLabel', form.firstAfterHours, errors.first_after_hours)}
      ${numberField(page, 'remind-every', 'every_hours', 'remindEveryLabel', form.everyHours, errors.every_hours)}
      ${numberField(page, 'remind-max', 'max', 'remindMaxLabel', form.max, errors.max)}
    </fieldset>
    <div class="field">
      <label for="default-verification">${t('verificationLabel')}</label>
      ${
        errors.verification &&
        html`<p class="error-text" id="default-verification-error">${errors.verification}</p>`
      }
      <select
        id="default-verification"
        name="default_verification"
        ${errors.verification ? html`aria-invalid="true" aria-describedby="default-verification-error"` : ''}
      >
        ${VERIFICATIONS.map(
          (v) =>
            html`<option value="${v}" ${form.verification === v ? html`selected` : ''}>
              ${t(`verification.${v}`)}
            </option>`,
        )}
      </select>
    </div>
    <button type="submit" class="button button-primary">${t('saveDefaults')}</button>
  </form>`;
}

export function keysPage(page: PageContext, view: KeysView) {
  const { t } = page;
  const csrfToken = page.account?.csrfToken ?? '';
  const body = html`<h1>${t('keysTitle')}</h1>
    <p class="lead">
      ${t('keysIntro')} <code dir="ltr">Authorization: Bearer &lt;key&gt;:&lt;secret&gt;</code>
    </p>
    ${view.created && createdPanel(page, view.created)}
    <section class="card" aria-labelledby="plan-heading">
      <h2 id="plan-heading">${t('planHeading')}</h2>
      <p id="plan-line">
        ${t('planLine', {
          plan: t(`plan.${view.plan}`),
          limit: formatNumber(page.locale, view.requestsPerMinute),
        })}
      </p>
    </section>
    <section class="card" aria-labelledby="keys-heading">
      <h2 id="keys-heading">${t('keysListHeading')}</h2>
      ${keysTable(page, view.keys, csrfToken)}
    </section>
    <section class="card" aria-labelledby="create-heading">
      <h2 id="create-heading">${t('createHeading')}</h2>
      ${createForm(page, view.form, csrfToken)}
    </section>
    <section class="card" aria-labelledby="embed-heading">
      <h2 id="embed-heading">${t('embedHeading')}</h2>
      ${embedForm(page, view.embed, csrfToken)}
    </section>
    <section class="card" aria-labelledby="defaults-heading">
      <h2 id="defaults-heading">${t('defaultsHeading')}</h2>
      ${defaultsForm(page, view.defaults, csrfToken)}
    </section>`;
  return layout(page, { title: t('keysTitle'), current: 'keys', body, switchPath: ADMIN_PATHS.keys });
}
