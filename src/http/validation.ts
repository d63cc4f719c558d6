import type { z } from 'zod';
import { AppError, type ErrorDetails } from '../errors.ts';

/** zod issues → `details` of the 422 envelope: dotted field path → messages. */
export function issuesToDetails(issues: readonly z.core.$ZodIssue[]): ErrorDetails {
  const details: ErrorDetails = {};
  for (const issue of issues) {
    const field = issue.path.length ? issue.path.join('.') : '_';
    (details[field] ??= []).push(issue.message);
  }
  return details;
}

/** Validates a request body; a failure is the documented 422 "Validation failed". */
export function parseBody<S extends z.ZodType>(schema: S, input: unknown): z.infer<S> {
  const result = schema.safeParse(input);
  if (!result.success) throw AppError.validation(issuesToDetails(result.error.issues));
  return result.data;
}
