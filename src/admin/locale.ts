import type { Middleware } from 'koa';
import type { AdminDeps, AdminState } from './context.ts';
import { setCookie, readCookie } from './cookies.ts';
import { DEFAULT_LOCALE, isLocale, translator, type Locale } from './i18n.ts';

export const LANG_COOKIE = 'wathiq_admin_lang';
const ONE_YEAR = 365 * 24 * 3600;

/** The first language of Accept-Language that the dashboard speaks. */
function fromAcceptLanguage(header: string): Locale | undefined {
  for (const part of header.split(',')) {
    const tag = part.split(';')[0]?.trim().toLowerCase().split('-')[0];
    if (isLocale(tag)) return tag;
  }
  return undefined;
}

/**
 * Picks the page language: `?lang=ar|en` (remembered in a cookie), else the cookie, else the browser's
 * Accept-Language, else English.
 */
export function chooseLocale(deps: Pick<AdminDeps, 'config'>): Middleware<AdminState> {
  return async (ctx, next) => {
    const asked = ctx.query.lang;
    let locale: Locale;
    if (isLocale(asked)) {
      locale = asked;
      if (readCookie(ctx, LANG_COOKIE) !== asked)
        setCookie(ctx, deps.config, LANG_COOKIE, asked, { maxAgeSeconds: ONE_YEAR, sameSite: 'Lax' });
    } else {
      const remembered = readCookie(ctx, LANG_COOKIE);
      locale = isLocale(remembered)
        ? remembered
        : (fromAcceptLanguage(ctx.get('accept-language')) ?? DEFAULT_LOCALE);
    }
    ctx.state.locale = locale;
    ctx.state.t = translator(locale);
    await next();
  };
}
