import { LIMITS } from '../../domain/model.ts';
import { AppError } from '../../errors.ts';
import type { AppContext } from '../../http/context.ts';
import { parseBody } from '../../http/validation.ts';
import { pathId } from '../../api/route-helpers.ts';
import { ListQuery } from './schemas.ts';

// Delivery ids are bigint serials: anything else (or beyond what a double holds exactly) names no delivery.
const DELIVERY_ID = /^[1-9]\d{0,14}$/;

/** The webhook id in the path; not a UUID is a 404. */
export const webhookIdOf = (ctx: AppContext): string => pathId(ctx, 'id', 'Webhook');

/** The delivery id in the path; anything but a positive whole number is a 404. */
export function deliveryIdOf(ctx: AppContext): number {
  const raw = (ctx.params as Record<string, string | undefined>).id ?? '';
  if (!DELIVERY_ID.test(raw)) throw AppError.notFound('Delivery');
  return Number(raw);
}

/** `page` and `per_page` of the query, checked (422), with their defaults. */
export function pageOf(ctx: AppContext) {
  const query = parseBody(ListQuery, ctx.query);
  return { page: query.page ?? 1, perPage: query.per_page ?? LIMITS.perPageDefault };
}

/** The page's meta as every listing answers it. */
export const meta = (page: { page: number; perPage: number }, total: number) => ({
  current_page: page.page,
  per_page: page.perPage,
  total,
  last_page: Math.max(1, Math.ceil(total / page.perPage)),
});
