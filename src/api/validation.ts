import type { z } from 'zod';
import { addDetail, AppError, newDetails, type ErrorDetails } from '../errors.ts';
import { withoutPrototypes } from '../http/untrusted.ts';

/** zod issues → `details` of the 422 envelope: dotted field path → messages. */
export function issuesToDetails(issues: readonly z.core.$ZodIssue[]): ErrorDetails {
  const details = newDetails();
  for (const issue of issues) {
    // Paths can carry the client's own keys (a strict object's unknown key): any name is safe here.
    const field = issue.path.length ? issue.path.map(String).join('.') : '_';
    addDetail(details, field, issue.message);
  }
  return details;
}

/**
 * Validates a request body or query; a failure is the documented 422 "Validation failed". The schema sees a copy
 * of the input without prototypes, so no key of the client's can stand in for an inherited property.
 */
export function parseBody<S extends z.ZodType>(schema: S, input: unknown): z.infer<S> {
  const result = schema.safeParse(withoutPrototypes(input));
  if (!result.success) throw AppError.validation(issuesToDetails(result.error.issues));
  return result.data;
}
