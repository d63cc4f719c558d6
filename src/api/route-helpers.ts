import { z } from 'zod';
import { AppError } from '../errors.ts';
import type { AppContext } from '../http/context.ts';

export const IdParams = z.object({ id: z.uuid().meta({ description: 'The id (UUID)' }) });
export const DocumentIdParams = z.object({
  documentId: z.uuid().meta({ description: 'The document id (UUID)' }),
});

/** What `z.uuid()` accepts, tested without the parse result and context a `safeParse` allocates every request. */
const UUID = z.regexes.uuid();

/** A path id; anything that is not a UUID names nothing, so it is the same 404 as an unknown id. */
export function pathId(ctx: AppContext, name: string, what: string): string {
  const params = ctx.params as Record<string, string | undefined>;
  const id = params[name];
  if (id === undefined || !UUID.test(id)) throw AppError.notFound(what);
  return id;
}

/** The JSON body of a PUT/POST, `{}` when there is none; other media types are a 415. */
export function jsonBody(ctx: AppContext, also = ''): unknown {
  if (ctx.request.length && !ctx.is('json')) {
    throw new AppError('unsupported_media_type', `Send the body as application/json${also}`);
  }
  return ctx.request.body ?? {};
}
