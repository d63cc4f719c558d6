import type { z } from 'zod';
import { issuesToDetails } from '../domain/validation.ts';
import { AppError } from '../errors.ts';

/** Validates a request body; a failure is the documented 422 "Validation failed". */
export function parseBody<S extends z.ZodType>(schema: S, input: unknown): z.infer<S> {
  const result = schema.safeParse(input);
  if (!result.success) throw AppError.validation(issuesToDetails(result.error.issues));
  return result.data;
}
