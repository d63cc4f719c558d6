import { isoTime } from '../../domain/time.ts';
import { ASSETS } from '../assets.ts';
import type { AdminContext } from '../context.ts';
import { CSRF_FIELD } from '../csrf.ts';
import { html, type SafeHtml } from '../../http/html.ts';
import {
  DIRECTION,
  LANGUAGE_NAME,
  LOCALES,
  formatDate,
  type Locale,
  type MessageKey,
  type Translate,
} from '../i18n.ts';
import { ADMIN_PATHS, FLASH_CODES, type FlashCode } from '../paths.ts';

/** What every view needs to know about the request it answers. */
export interface PageContext {
  locale: Locale;
  t: Translate;
  path: string;
  method: string;
  query: URLSearchParams;
  requestId: string;
  /** Present on pages of a signed-in account. */
  account?: { name: string; email: string; csrfToken: string };
}

export function pageContextOf(ctx: AdminContext): PageContext {
  const session = ctx.state.session;
  return {
    locale: ctx.state.locale,
    t: ctx.state.t,
    path: ctx.path,
    method: ctx.method,
    query: new URLSearchParams(ctx.querystring),
    requestId: ctx.state.requestId,
    ...(session
      ? { account: { name: session.accountName, email: session.email, csrfToken: session.csrfToken } }
      : {}),
  };
}

/**
 * A message whose placeholders hold what a person typed (a name, an origin): each value in a `<bdi>` of its own,
 * so an Arabic name in an English sentence (or the reverse) keeps its own direction and moves nothing around it.
 */
export function withUserText(t: Translate, key: MessageKey, values: Record<string, string>): SafeHtml {
  const marks = Object.fromEntries(Object.keys(values).map((name) => [name, `\uE000${name}\uE000`]));
  // Split on the marks: odd parts are placeholder names, even parts the message's own text.
  const parts = t(key, marks).split(/\uE000(\w+)\uE000/);
  return html`${parts.map((part, i) => (i % 2 === 1 ? html`<bdi>${values[part] ?? ''}</bdi>` : part))}`;
}

export function csrfInput(token: string): SafeHtml {
  return html`<input type="hidden" name="${CSRF_FIELD}" value="${token}" />`;
}

/**
 * A Copy button for the field `targetId` (hidden until the script reveals it); it announces the result in the
 * page's `#copy-status`.
 */
export function copyButton(page: PageContext, targetId: string, label: string): SafeHtml {
  const { t } = page;
  return html`<button
    type="button"
    class="button button-secondary"
    hidden
    data-copy-target="${targetId}"
    data-copy-status="copy-status"
    data-copied="${t('copied')}"
    data-copy-failed="${t('copyFailed')}"
    aria-label="${t('copyWhat', { what: label })}"
  >
    ${t('copy')}
  </button>`;
}

export function time(page: PageContext, date: Date | null | undefined, fallback?: string): SafeHtml {
  if (!date) return html`${fallback ?? page.t('dash')}`;
  return html`<time datetime="${isoTime(date)}">${formatDate(page.locale, date)}</time>`;
}

const FLASH: Record<FlashCode, { key: MessageKey; tone: 'ok' | 'warn' }> = {
  signed_out: { key: 'flashSignedOut', tone: 'ok' },
  expired: { key: 'flashExpired', tone: 'warn' },
  revoked: { key: 'flashRevoked', tone: 'ok' },
  already_revoked: { key: 'flashAlreadyRevoked', tone: 'warn' },
  embed_saved: { key: 'flashEmbedSaved', tone: 'ok' },
  defaults_saved: { key: 'flashDefaultsSaved', tone: 'ok' },
  code_expired: { key: 'flashCodeExpired', tone: 'warn' },
  second_factor_off: { key: 'flashSecondFactorOff', tone: 'ok' },
};

function flash(page: PageContext): SafeHtml {
  const code = page.query.get('m');
  const known = (FLASH_CODES as readonly string[]).includes(code ?? '')
    ? FLASH[code as FlashCode]
    : undefined;
  return html`${known && html`<p class="notice notice-${known.tone}" role="status">${page.t(known.key)}</p>`}`;
}

/**
 * The same page in the other language: the current query with `lang` replaced (and the flash dropped). A page
 * answering a form post names the page to switch on (`switchPath`); re-sending the post is never an option.
 */
function languageLinks(page: PageContext, switchPath: string | undefined): SafeHtml {
  const isGet = page.method === 'GET' || page.method === 'HEAD';
  const path = switchPath ?? (isGet ? page.path : ADMIN_PATHS.home);
  return html`${LOCALES.filter((l) => l !== page.locale).map((other) => {
    const query = isGet ? new URLSearchParams(page.query) : new URLSearchParams();
    query.delete('m');
    query.set('lang', other);
    return html`<a
      class="lang-switch"
      href="${`${path}?${query.toString()}`}"
      lang="${other}"
      hreflang="${other}"
      >${LANGUAGE_NAME[other]}</a
    >`;
  })}`;
}

type NavItem = 'home' | 'keys' | 'templates' | 'security';

function nav(page: PageContext, current: NavItem | undefined): SafeHtml {
  if (!page.account) return html``;
  const item = (id: NavItem, href: string, label: MessageKey) =>
    html`<li><a href="${href}" ${current === id ? html`aria-current="page"` : ''}>${page.t(label)}</a></li>`;
  return html`<nav class="site-nav" aria-label="${page.t('mainNav')}">
    <ul>
      ${item('home', ADMIN_PATHS.home, 'navHome')}${item('keys', ADMIN_PATHS.keys, 'navApiKeys')}${item(
        'templates',
        ADMIN_PATHS.templates,
        'navTemplates',
      )}${item('security', ADMIN_PATHS.security, 'navSecurity')}
    </ul>
  </nav>`;
}

function accountTools(page: PageContext): SafeHtml {
  if (!page.account) return html``;
  return html`<span class="who">${page.t('signedInAs')} <bdi dir="ltr">${page.account.email}</bdi></span>
    <form method="post" action="${ADMIN_PATHS.logout}">
      ${csrfInput(page.account.csrfToken)}
      <button type="submit" class="button-link">${page.t('signOut')}</button>
    </form>`;
}

/** The document around every page: language and direction, header, navigation, flash, main landmark. */
export function layout(
  page: PageContext,
  options: { title: string; current?: NavItem; body: SafeHtml; switchPath?: string },
): SafeHtml {
  const { t } = page;
  const css = ASSETS['admin.css'];
  const js = ASSETS['admin.js'];
  return html`<!doctype html>
    <html lang="${page.locale}" dir="${DIRECTION[page.locale]}">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="robots" content="noindex" />
        <title>${options.title} · ${t('appName')}</title>
        <link rel="stylesheet" href="${ADMIN_PATHS.asset('admin.css', css.version)}" />
        <script src="${ADMIN_PATHS.asset('admin.js', js.version)}" defer></script>
      </head>
      <body>
        <a class="skip-link" href="#main">${t('skipToContent')}</a>
        <header class="site-header">
          <div class="inner">
            <a class="brand" href="${ADMIN_PATHS.home}">${t('appName')}<span>${t('dashboard')}</span></a>
            ${nav(page, options.current)}
            <div class="header-tools">${languageLinks(page, options.switchPath)} ${accountTools(page)}</div>
          </div>
        </header>
        <main id="main" tabindex="-1">${flash(page)} ${options.body}</main>
      </body>
    </html> `;
}
