import { z } from 'zod';
import { ERROR_TYPE_NAMES } from '../../errors.ts';

/** Timestamps as the API writes them: ISO 8601 with an explicit offset (docs/product-rules.md §1). */
export const Timestamp = z.iso.datetime({ offset: true }).meta({ example: '2026-11-22T09:41:00+00:00' });

export const ErrorEnvelope = z
  .strictObject({
    success: z.literal(false),
    error: z.strictObject({
      code: z.int().meta({ description: 'The HTTP status code' }),
      type: z.enum(ERROR_TYPE_NAMES).meta({
        description:
          'The cause, stable for clients to branch on: one value per cause, so errors of one status (the 409s above all) tell apart; docs/api.md lists them',
      }),
      message: z.string().meta({ description: 'Short text; "Validation failed" for every 422' }),
      details: z.record(z.string(), z.array(z.string())).meta({
        description:
          'Field (dotted path such as `approvers.0.phone`) → messages; empty unless validation failed',
      }),
    }),
  })
  .meta({ id: 'Error' });

export const PageMeta = z
  .strictObject({
    current_page: z.int().min(1),
    per_page: z.int().min(1),
    total: z.int().min(0),
    last_page: z.int().min(1),
  })
  .meta({ id: 'PageMeta' });

export function envelope<T extends z.ZodType>(data: T) {
  return z.strictObject({ success: z.literal(true), data });
}

export function pageEnvelope<T extends z.ZodType>(item: T) {
  return z.strictObject({ success: z.literal(true), data: z.array(item), meta: PageMeta });
}
