import type { Language } from '../domain/model.ts';
import { html, trustedHtml, type SafeHtml } from './html.ts';

/**
 * The shell of the public pages (the approver's page, the verification page): the document's language and
 * direction, no indexing, the shell's and the page's stylesheets (URLs from `asset`), the Wathiq bar. Every
 * value goes through `html`, so it is escaped.
 */
export function publicPageLayout(page: {
  lang: Language;
  title: string;
  /** The URL of one of the page's assets by its name (`page.css` among them). */
  asset: (name: string) => string;
  /** The page's own stylesheet, an asset name. */
  stylesheet: string;
  /** More of the head (preloads), after the stylesheets. */
  head?: SafeHtml;
  body: SafeHtml;
  scripts?: SafeHtml;
}): string {
  const dir = page.lang === 'ar' ? 'rtl' : 'ltr';
  return `<!doctype html>${
    html`<html lang="${page.lang}" dir="${dir}">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="robots" content="noindex" />
        <title>${page.title} · Wathiq</title>
        <link rel="stylesheet" href="${page.asset('page.css')}" />
        <link rel="stylesheet" href="${page.asset(page.stylesheet)}" />
        ${page.head ?? html``}
      </head>
      <body>
        <header class="bar"><span class="brand">Wathiq · واثق</span></header>
        <main>${page.body}</main>
        ${page.scripts ?? html``}
      </body>
    </html>`.value
  }`;
}

/** JSON for the page script, safe inside <script type="application/json"> (no `</script>` break-out). */
export function jsonScript(id: string, data: unknown): SafeHtml {
  const json = JSON.stringify(data)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
  return trustedHtml(`<script type="application/json" id="${id}">${json}</script>`);
}
