import type { Language } from '../domain/model.ts';
import { html, type SafeHtml } from '../http/html.ts';
import { jsonScript, publicPageLayout } from '../http/public-page.ts';
import { formatHijri, formatRiyadh, formatUtc, ltr } from '../pdf/compose/wording.ts';
import type { VerificationView } from './load-verification.ts';
import { VERIFY_STRINGS } from './strings.ts';

export const VERIFY_ASSETS = '/v/assets';

function layout(lang: Language, title: string, body: SafeHtml, scripts?: SafeHtml): string {
  return publicPageLayout({
    lang,
    title,
    asset: (name) => `${VERIFY_ASSETS}/${name}`,
    stylesheet: 'verify.css',
    body,
    ...(scripts && { scripts }),
  });
}

const row = (label: string, value: SafeHtml | string, cls = '') =>
  html`<div class="row ${cls}">
    <dt>${label}</dt>
    <dd>${value}</dd>
  </div>`;

/** What every part of the page reads in its language. */
interface Words {
  lang: Language;
  t: (typeof VERIFY_STRINGS)[Language];
  /** A name or role in the page's language, else in the other. */
  pick: (ar: string | null, en: string | null) => string;
  hijri: (d: Date) => string;
}

function wordsFor(lang: Language): Words {
  return {
    lang,
    t: VERIFY_STRINGS[lang],
    pick: (ar, en) => (lang === 'ar' ? (ar ?? en) : (en ?? ar)) ?? '',
    hijri: (d) => formatHijri(d)[lang],
  };
}

/** One approver's card: who, what they did, when and by which channel, and any delegation on the way. */
function approverCard(a: VerificationView['approvers'][number], i: number, w: Words): SafeHtml {
  const { lang, t, pick, hijri } = w;
  return html`<li class="card approver">
    <h3><span class="index">${i + 1}.</span> <bdi>${pick(a.nameAr, a.nameEn)}</bdi></h3>
    <p class="meta"><bdi>${lang === 'ar' ? a.nameEn : a.nameAr}</bdi></p>
    <dl>
      ${a.roleAr || a.roleEn ? row(t.role, html`<bdi>${pick(a.roleAr, a.roleEn)}</bdi>`) : ''}
      ${row(t.phone, html`<bdi dir="ltr">${a.phone}</bdi>`)} ${row(t.action, t.actions[a.actionType])}
      ${row(t.did, html`<bdi>${a.outcome[lang]}</bdi>`)} ${row(t.channel, t.channels[a.channel])}
      ${row(
        t.time,
        html`<bdi dir="ltr">${formatRiyadh(a.actedAt)}</bdi><br /><bdi dir="ltr" class="meta"
            >${formatUtc(a.actedAt)}</bdi
          >`,
        'time',
      )}
      ${row(t.hijri, html`<bdi>${hijri(a.actedAt)}</bdi>`)}
      ${a.delegations.map((d) =>
        row(
          t.delegation,
          html`<span class="delegation"
              ><bdi>${pick(d.from.nameAr, d.from.nameEn)}</bdi> (<bdi dir="ltr">${d.from.phone}</bdi>)
              ${t.delegatedTo} <bdi>${pick(d.to.nameAr, d.to.nameEn)}</bdi>:
              <bdi>${d.reason && d.reason.trim() !== '' ? d.reason : t.noReason}</bdi></span
            ><br /><span class="meta">${t.delegatedAt}: <bdi dir="ltr">${formatRiyadh(d.at)}</bdi></span>`,
        ),
      )}
    </dl>
  </li>`;
}

/** The document: its reference, titles, sender, signature and both fingerprints. */
function documentSection(view: VerificationView, w: Words): SafeHtml {
  const { lang, t, hijri } = w;
  const other: Language = lang === 'ar' ? 'en' : 'ar';
  const signedOn = formatRiyadh(view.signedAt);
  const signature = view.signature;
  return html`<section class="card" aria-labelledby="page-title">
    <p class="meta"><a href="?lang=${other}" class="lang" hreflang="${other}">${t.language}</a></p>
    <h1 id="page-title">${t.title}</h1>
    <p class="meta">${t.intro}</p>
    <p class="status" id="approved-on">
      ${t.approvedOn} <bdi dir="ltr">${signedOn}</bdi> — <bdi>${hijri(view.signedAt)}</bdi>
    </p>
    <dl>
      ${row(t.reference, html`<bdi dir="ltr" id="reference">${view.reference}</bdi>`)}
      ${row(t.titleAr, html`<bdi lang="ar" dir="rtl" id="title-ar">${view.titleAr}</bdi>`)}
      ${row(t.titleEn, html`<bdi lang="en" dir="ltr" id="title-en">${view.titleEn}</bdi>`)}
      ${view.accountName ? row(t.from, html`<bdi>${view.accountName}</bdi>`) : ''}
      ${row(
        t.signature,
        html`<span id="signature-level"
          >${signature ? t.signatureLevel(signature.level) : t.signaturePades}</span
        >`,
      )}
      ${
        signature?.certificateSubject
          ? row(
              t.signedBy,
              html`<bdi dir="ltr" id="signing-certificate">${signature.certificateSubject}</bdi>`,
            )
          : ''
      }
      ${row(t.signedSha256, html`<code id="signed-sha256">${view.signedSha256}</code>`, 'hash')}
      ${row(t.originalSha256, html`<code>${view.originalSha256}</code>`, 'hash')}
    </dl>
  </section>`;
}

/** The check of a file against the signed one (the page's script fills the verdict). */
function checkSection(t: Words['t']): SafeHtml {
  return html`<section class="card check" aria-labelledby="check-title">
    <h2 id="check-title">${t.checkTitle}</h2>
    <p class="meta" id="check-help">${t.checkHelp}</p>
    <div id="drop-zone" class="drop" tabindex="0" role="button" aria-describedby="check-help">
      <p>${t.dropHere}</p>
      <label class="button" for="file-input">${t.choose}</label>
      <!-- The label is the button (in the page's language); the input stays focusable for keyboards. -->
      <input id="file-input" class="visually-hidden" type="file" accept="application/pdf,.pdf" />
    </div>
    <div id="verdict" role="status" aria-live="polite" hidden>
      <p id="verdict-text"></p>
      <p class="meta"><span>${t.fingerprint}</span>: <code id="verdict-sha256"></code></p>
    </div>
  </section>`;
}

/** What the page's script reads: where to check, the fingerprints, the size limit and its words. */
function pageData(input: { token: string; view: VerificationView; checkMaxBytes: number }, w: Words) {
  const { lang, t } = w;
  const { view } = input;
  const signedOn = formatRiyadh(view.signedAt);
  return {
    checkUrl: `/v/${input.token}/check`,
    signedSha256: view.signedSha256,
    originalSha256: view.originalSha256,
    maxBytes: input.checkMaxBytes,
    strings: {
      checking: t.checking,
      // Isolated, so the date's parentheses and digits keep their order inside Arabic text.
      signed: t.verdictSigned(lang === 'ar' ? ltr(signedOn) : signedOn),
      original: t.verdictOriginal,
      different: t.verdictDifferent,
      tooLarge: t.tooLarge(Math.round((input.checkMaxBytes / 1048576) * 10) / 10),
      failed: t.failed,
      helpServer: t.checkHelpServer,
    },
  };
}

/** The verification page of an approved, signed document (`GET /v/{token}`). */
export function renderVerificationPage(input: {
  token: string;
  lang: Language;
  view: VerificationView;
  checkMaxBytes: number;
}): string {
  const w = wordsFor(input.lang);
  const body = html`${documentSection(input.view, w)} ${checkSection(w.t)}
    <section aria-labelledby="approvers-title">
      <h2 id="approvers-title">${w.t.approvers}</h2>
      <ol class="approvers">
        ${input.view.approvers.map((a, i) => approverCard(a, i, w))}
      </ol>
    </section>`;
  return layout(
    input.lang,
    w.t.title,
    body,
    html`${jsonScript('verify-data', pageData(input, w))}
      <script type="module" src="${VERIFY_ASSETS}/verify.js"></script>`,
  );
}

/** The same page for a malformed token, an unknown one and a document that is not signed: it tells nothing. */
export function renderNotFoundPage(lang: Language): string {
  const t = VERIFY_STRINGS[lang];
  return layout(
    lang,
    t.notFoundTitle,
    html`<section class="card">
      <h1>${t.notFoundTitle}</h1>
      <p>${t.notFound}</p>
    </section>`,
  );
}

export function renderRateLimitedPage(lang: Language): string {
  const t = VERIFY_STRINGS[lang];
  return layout(
    lang,
    t.title,
    html`<section class="card">
      <h1>${t.title}</h1>
      <p>${t.rateLimited}</p>
    </section>`,
  );
}
