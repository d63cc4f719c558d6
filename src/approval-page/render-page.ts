import { html, type SafeHtml } from '../http/html.ts';
import type { AssetCatalog } from '../http/asset-catalog.ts';
import { jsonScript, publicPageLayout } from '../http/public-page.ts';
import type { Approver } from '../features/documents/approvers-store.ts';
import type { Document } from '../features/documents/documents-store.ts';
import { LIMITS, type Language } from '../domain/model.ts';
import { STRINGS, type PageStrings } from './strings.ts';

type Assets = Pick<AssetCatalog, 'url'>;

function layout(
  assets: Assets,
  page: { lang: Language; title: string; body: SafeHtml; head?: SafeHtml; scripts?: SafeHtml },
): string {
  return publicPageLayout({ ...page, asset: (name) => assets.url(name), stylesheet: 'approval.css' });
}

/** Who is asking, and for what: everything the full page shows, and nothing of it before a needed code. */
interface PageInput {
  assets: Assets;
  token: string;
  lang: Language;
  document: Document;
  approver: Approver;
  accountName: string;
  /** The approver needs a one-time code and has no current proof of one: the page is the code step alone. */
  needsCode?: boolean;
  /** The document allows delegation and it is this approver's turn: the page offers the delegation step. */
  canDelegate?: boolean;
}

export function renderApprovalPage(input: PageInput): string {
  return input.needsCode ? renderCodePage(input) : renderDocumentPage(input);
}

/**
 * A verified approver's page before the code: the code step and nothing of the document, not its title (in the
 * body or the <title> a link preview shows), its reference, the sender's or the approver's name, nor the PDF. Once
 * the code is right the script reloads, and the server, seeing the proof, renders the whole page.
 */
function renderCodePage(input: PageInput): string {
  const { lang, assets } = input;
  const t = STRINGS[lang];
  const other: Language = lang === 'ar' ? 'en' : 'ar';
  const body = html`<section class="card" aria-labelledby="page-title">
      <p class="meta"><a href="?lang=${other}" class="lang" hreflang="${other}">${t.language}</a></p>
      <h1 id="page-title">${t.title}</h1>
    </section>
    <section id="code-step" class="card" aria-labelledby="code-title">
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
    </section>`;
  const data = { base: `/a/${input.token}`, lang, strings: t.errors, code: t.code };
  return layout(assets, {
    lang,
    title: t.title,
    body,
    scripts: html`${jsonScript('approval-data', data)}
      <script type="module" src="${assets.url('approval.js')}"></script>`,
  });
}

/** The viewer: a progress bar while the PDF loads, the pages as they are drawn, and a bar that stays in reach. */
function viewerSection(input: PageInput): SafeHtml {
  const t = STRINGS[input.lang];
  return html`<section class="viewer" aria-label="${t.viewer.label}">
    <div id="pdf-loading" class="loading">
      <p id="pdf-status" role="status">${t.loadingPdf}</p>
      <progress id="pdf-progress" max="100" aria-labelledby="pdf-status"></progress>
    </div>
    <div id="pdf-pages" class="pages" dir="ltr"></div>
    <div class="viewer-bar" role="toolbar" aria-label="${t.viewer.toolbar}">
      <button type="button" id="zoom-out" class="zoom" aria-label="${t.viewer.zoomOut}" disabled>−</button>
      <output id="zoom-level" aria-label="${t.viewer.zoomLevel}">100%</output>
      <button type="button" id="zoom-in" class="zoom" aria-label="${t.viewer.zoomIn}">+</button>
      <span id="page-indicator" class="page-indicator" dir="ltr"></span>
      <a class="to-action" id="to-action" href="#approve-form" title="${t.viewer.toAction}"
        >${t.actions[input.approver.actionType]} <span aria-hidden="true">↓</span></a
      >
    </div>
    <p><a href="/a/${input.token}/document.pdf" target="_blank" rel="noopener">${t.openPdf}</a></p>
  </section>`;
}

/** What the page's scripts are told: where things are, the approver's action, and the words they show. */
function pageData(input: PageInput) {
  const { lang, document: doc, assets } = input;
  const t = STRINGS[lang];
  return {
    base: `/a/${input.token}`,
    lang,
    assets: {
      viewer: assets.url('pdf-viewer.js'),
      pad: assets.url('signature-pad.js'),
      pdfjs: assets.url('pdf.min.mjs'),
      worker: assets.url('pdf.worker.min.mjs'),
      standardFonts: assets.url('standard_fonts'),
      cMaps: assets.url('cmaps'),
    },
    pdfBytes: doc.fileSize,
    actionType: input.approver.actionType,
    strings: { ...t.errors, doneCompleted: t.doneCompleted, doneRejected: t.doneRejected, pages: t.pages },
    viewer: t.viewer,
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
}

/** The signing and stamping parts of the action form. */
const signPanel = (t: PageStrings) =>
  html` <fieldset class="panel" id="sign-panel">
    <legend>${t.drawHint}</legend>
    <canvas id="signature-pad" width="600" height="220" aria-label="${t.drawHint}" role="img"></canvas>
    <div class="pad-tools">
      <button type="button" class="link" id="undo-signature">${t.undo}</button>
      <button type="button" class="link" id="clear-signature">${t.clear}</button>
    </div>
    <label for="typed-name">${t.orType}</label>
    <input
      id="typed-name"
      name="typed_name"
      maxlength="255"
      autocomplete="name"
      placeholder="${t.typedLabel}"
    />
  </fieldset>`;
const stampPanel = (t: PageStrings) =>
  html` <fieldset class="panel" id="stamp-panel">
    <legend>${t.actions.stamp}</legend>
    <label for="stamp-file">${t.uploadStamp}</label>
    <input id="stamp-file" type="file" accept="image/png,image/jpeg" />
    <img id="stamp-preview" alt="" hidden />
    <label class="check"><input id="generated-seal" type="checkbox" /> ${t.useSeal}</label>
  </fieldset>`;

/** The delegation step, when the document allows it and it is this approver's turn. */
const delegateStep = (t: PageStrings) =>
  html`<details class="card delegate" id="delegate-step">
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
  </details>`;

function renderDocumentPage(input: PageInput): string {
  const { lang, document: doc, approver, assets } = input;
  const t = STRINGS[lang];
  const other: Language = lang === 'ar' ? 'en' : 'ar';
  const title = lang === 'ar' ? doc.titleAr : doc.titleEn;
  const name = lang === 'ar' ? approver.nameAr : approver.nameEn;
  const action = approver.actionType;

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
    ${viewerSection(input)}
    <form id="approve-form" class="card" novalidate>
      ${action === 'sign' ? signPanel(t) : ''} ${action === 'stamp' ? stampPanel(t) : ''}
      <p id="form-error" class="error" role="alert" hidden></p>
      <button type="submit" class="primary" id="submit-action">${t.submit[action]}</button>
    </form>
    <details class="card reject">
      <summary>${t.reject}</summary>
      <form id="reject-form" novalidate>
        <label for="reject-reason">${t.rejectReason}</label>
        <textarea id="reject-reason" name="reason" maxlength="1000" rows="3"></textarea>
        <button type="submit" class="danger" id="submit-reject">${t.rejectConfirm}</button>
      </form>
    </details>
    ${input.canDelegate ? delegateStep(t) : ''}
    <section id="done" class="card done" hidden tabindex="-1">
      <h2>${t.doneTitle}</h2>
      <p id="done-text"></p>
    </section>`;

  const data = pageData(input);
  // Fetched in parallel with the page's own script rather than one after another (each a round trip on a phone).
  const preload = ['pdf-viewer.js', 'pdf.min.mjs', ...(action === 'sign' ? ['signature-pad.js'] : [])];
  return layout(assets, {
    lang,
    title,
    body,
    head: html`${preload.map((name) => html`<link rel="modulepreload" href="${assets.url(name)}" />`)}`,
    scripts: html`${jsonScript('approval-data', data)}
      <script type="module" src="${assets.url('approval.js')}"></script>`,
  });
}

/** A page for a link that cannot be used now (already acted, document finished, not yet your turn). */
export function renderClosedPage(assets: Assets, lang: Language, message: string, detail?: string): string {
  const t = STRINGS[lang];
  return layout(assets, {
    lang,
    title: t.title,
    body: html`<section class="card">
      <h1>${t.title}</h1>
      <p>${message}</p>
      ${detail ? html`<p class="meta">${detail}</p>` : ''}
    </section>`,
  });
}
