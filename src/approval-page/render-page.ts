import { html, type SafeHtml } from '../http/html.ts';
import { jsonScript, publicPageLayout } from '../http/public-page.ts';
import type { Approver } from '../db/stores/approvers-store.ts';
import type { Document } from '../db/stores/documents-store.ts';
import { LIMITS, type Language } from '../domain/model.ts';
import { STRINGS } from './strings.ts';

const ASSETS = '/a/assets';

function layout(lang: Language, title: string, body: SafeHtml, scripts?: SafeHtml): string {
  return publicPageLayout({
    lang,
    title,
    assets: ASSETS,
    stylesheet: 'approval.css',
    body,
    ...(scripts && { scripts }),
  });
}

export function renderApprovalPage(input: {
  token: string;
  lang: Language;
  document: Document;
  approver: Approver;
  accountName: string;
  /** The approver needs a one-time code and has no current proof of one: the page starts with the code step. */
  needsCode?: boolean;
  /** The document allows delegation and it is this approver's turn: the page offers the delegation step. */
  canDelegate?: boolean;
}): string {
  const { lang, document: doc, approver } = input;
  const t = STRINGS[lang];
  const other: Language = lang === 'ar' ? 'en' : 'ar';
  const title = lang === 'ar' ? doc.titleAr : doc.titleEn;
  const name = lang === 'ar' ? approver.nameAr : approver.nameEn;
  const action = approver.actionType;
  const base = `/a/${input.token}`;

  const signPanel = html` <fieldset class="panel" id="sign-panel">
    <legend>${t.drawHint}</legend>
    <canvas id="signature-pad" width="600" height="220" aria-label="${t.drawHint}" role="img"></canvas>
    <button type="button" class="link" id="clear-signature">${t.clear}</button>
    <label for="typed-name">${t.orType}</label>
    <input
      id="typed-name"
      name="typed_name"
      maxlength="255"
      autocomplete="name"
      placeholder="${t.typedLabel}"
    />
  </fieldset>`;
  const stampPanel = html` <fieldset class="panel" id="stamp-panel">
    <legend>${t.actions.stamp}</legend>
    <label for="stamp-file">${t.uploadStamp}</label>
    <input id="stamp-file" type="file" accept="image/png,image/jpeg" />
    <img id="stamp-preview" alt="" hidden />
    <label class="check"><input id="generated-seal" type="checkbox" /> ${t.useSeal}</label>
  </fieldset>`;

  const body = html` <section class="card" aria-labelledby="doc-title">
      <p class="meta"><a href="?lang=${other}" class="lang" hreflang="${other}">${t.language}</a></p>
      <h1 id="doc-title"><bdi>${title}</bdi></h1>
      <p class="meta">
        ${t.reference}: <bdi>${doc.reference}</bdi> · ${t.from}: <bdi>${input.accountName}</bdi>
      </p>
      <p class="who">
        <bdi>${name}</bdi
        >${approver.roleAr || approver.roleEn ? html` — <bdi>${lang === 'ar' ? (approver.roleAr ?? approver.roleEn) : (approver.roleEn ?? approver.roleAr)}</bdi>` : ''}
      </p>
      <p class="action">${t.yourAction}: <strong>${t.actions[action]}</strong></p>
    </section>
    <section class="viewer" aria-label="PDF" ${input.needsCode ? 'hidden' : ''}>
      <p id="pdf-status">${t.loadingPdf}</p>
      <div id="pdf-pages"></div>
      <p><a href="${base}/document.pdf" target="_blank" rel="noopener">${t.openPdf}</a></p>
    </section>
    ${
      input.needsCode
        ? html`<section id="code-step" class="card" aria-labelledby="code-title">
            <h2 id="code-title">${t.code.title}</h2>
            <p>${t.code.intro}</p>
            <button type="button" class="primary" id="send-code">${t.code.send}</button>
            <p id="code-sent" class="meta" role="status" hidden>${t.code.sent}</p>
            <form id="code-form" novalidate hidden>
              <label for="otp-code">${t.code.label}</label>
              <input
                id="otp-code"
                name="code"
                inputmode="numeric"
                autocomplete="one-time-code"
                pattern="[0-9]{6}"
                maxlength="6"
                dir="ltr"
              />
              <button type="submit" class="primary" id="verify-code">${t.code.verify}</button>
            </form>
            <p id="code-error" class="error" role="alert" hidden></p>
          </section>`
        : ''
    }
    <form id="approve-form" class="card" novalidate ${input.needsCode ? 'hidden' : ''}>
      ${action === 'sign' ? signPanel : ''} ${action === 'stamp' ? stampPanel : ''}
      <p id="form-error" class="error" role="alert" hidden></p>
      <button type="submit" class="primary" id="submit-action">${t.submit[action]}</button>
    </form>
    <details class="card reject" ${input.needsCode ? 'hidden' : ''}>
      <summary>${t.reject}</summary>
      <form id="reject-form" novalidate>
        <label for="reject-reason">${t.rejectReason}</label>
        <textarea id="reject-reason" name="reason" maxlength="1000" rows="3"></textarea>
        <button type="submit" class="danger" id="submit-reject">${t.rejectConfirm}</button>
      </form>
    </details>
    ${
      input.canDelegate
        ? html`<details class="card delegate" id="delegate-step" ${input.needsCode ? 'hidden' : ''}>
            <summary>${t.delegate.open}</summary>
            <p class="meta">${t.delegate.intro}</p>
            <form id="delegate-form" novalidate>
              <label for="delegate-name">${t.delegate.name}</label>
              <input id="delegate-name" name="name" maxlength="255" autocomplete="off" />
              <label for="delegate-phone">${t.delegate.phone}</label>
              <input
                id="delegate-phone"
                name="phone"
                type="tel"
                inputmode="tel"
                maxlength="24"
                dir="ltr"
                autocomplete="off"
                placeholder="966501234567"
              />
              <label for="delegate-reason">${t.delegate.reason}</label>
              <textarea
                id="delegate-reason"
                name="reason"
                maxlength="${String(LIMITS.delegationReasonMax)}"
                rows="3"
              ></textarea>
              <p id="delegate-error" class="error" role="alert" hidden></p>
              <button type="submit" class="primary" id="submit-delegate">${t.delegate.submit}</button>
            </form>
          </details>`
        : ''
    }
    <section id="done" class="card done" hidden tabindex="-1">
      <h2>${t.doneTitle}</h2>
      <p id="done-text"></p>
    </section>`;

  const data = {
    base,
    lang,
    assets: ASSETS,
    actionType: action,
    strings: { ...t.errors, doneCompleted: t.doneCompleted, doneRejected: t.doneRejected, pages: t.pages },
    code: t.code,
    delegate: input.canDelegate
      ? {
          needName: t.delegate.needName,
          needReason: t.delegate.needReason,
          badPhone: t.delegate.badPhone,
          notAllowed: t.delegate.notAllowed,
          // The confirmation names the delegate: the page puts the name in place of {name}.
          done: t.delegate.done('{name}'),
        }
      : null,
  };
  return layout(
    lang,
    title,
    body,
    html`${jsonScript('approval-data', data)}
      <script type="module" src="${ASSETS}/approval.js"></script>`,
  );
}

/** A page for a link that cannot be used now (already acted, document finished, not yet your turn). */
export function renderClosedPage(lang: Language, message: string, detail?: string): string {
  const t = STRINGS[lang];
  return layout(
    lang,
    t.title,
    html`<section class="card">
      <h1>${t.title}</h1>
      <p>${message}</p>
      ${detail ? html`<p class="meta">${detail}</p>` : ''}
    </section>`,
  );
}
