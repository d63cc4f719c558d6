import type { AppContext } from './context.ts';

export interface PageMeta {
  current_page: number;
  per_page: number;
  total: number;
  last_page: number;
}

/** The success envelope (docs/product-rules.md §1). */
export function ok(ctx: AppContext, data: unknown, status = 200): void {
  ctx.status = status;
  ctx.body = { success: true, data };
}

export function okPage(ctx: AppContext, data: unknown[], meta: PageMeta): void {
  ctx.status = 200;
  ctx.body = { success: true, data, meta };
}
