import type { z } from 'zod';
import { issuesToDetails } from '../domain/validation.ts';
import { AppError } from '../errors.ts';
import { withoutPrototypes } from './untrusted.ts';

/**
 * Validates a request body or query; a failure is the documented 422 "Validation failed". The schema sees a copy
 * of the input without prototypes, so no key of the client's can stand in for an inherited property.
 */
export function parseBody<S extends z.ZodType>(schema: S, input: unknown): z.infer<S> {
  const result = schema.safeParse(withoutPrototypes(input));
  if (!result.success) throw AppError.validation(issuesToDetails(result.error.issues));
  return result.data;
}
