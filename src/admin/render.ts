import type { AdminContext } from './context.ts';
import type { SafeHtml } from '../http/html.ts';

export function renderPage(ctx: AdminContext, status: number, page: SafeHtml): void {
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = page.value;
}

/** 303 See Other: after a form post the browser GETs the target, so a reload never repeats the post. */
export function seeOther(ctx: AdminContext, url: string): void {
  ctx.redirect(url);
  ctx.status = 303;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Ids from the URL are checked before they reach a uuid column (a malformed one would be a database error). */
export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value);
}
