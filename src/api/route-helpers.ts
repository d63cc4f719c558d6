import { z } from 'zod';
import { AppError } from '../errors.ts';
import type { AppContext } from '../http/context.ts';

export const IdParams = z.object({ id: z.uuid().meta({ description: 'The id (UUID)' }) });
export const DocumentIdParams = z.object({
  documentId: z.uuid().meta({ description: 'The document id (UUID)' }),
});

const UUID = z.uuid();

/** A path id; anything that is not a UUID names nothing, so it is the same 404 as an unknown id. */
export function pathId(ctx: AppContext, name: string, what: string): string {
  const params = ctx.params as Record<string, string | undefined>;
  const parsed = UUID.safeParse(params[name]);
  if (!parsed.success) throw AppError.notFound(what);
  return parsed.data;
}

/** The JSON body of a PUT/POST, `{}` when there is none; other media types are a 415. */
export function jsonBody(ctx: AppContext, also = ''): unknown {
  if (ctx.request.length && !ctx.is('json')) {
    throw new AppError('unsupported_media_type', `Send the body as application/json${also}`);
  }
  return ctx.request.body ?? {};
}
