import type { z } from 'zod';
import type { ErrorDetails } from '../errors.ts';

/** zod issues → `details` of the 422 envelope: dotted field path → messages. */
export function issuesToDetails(issues: readonly z.core.$ZodIssue[]): ErrorDetails {
  const details: ErrorDetails = {};
  for (const issue of issues) {
    const field = issue.path.length ? issue.path.join('.') : '_';
    (details[field] ??= []).push(issue.message);
  }
  return details;
}
