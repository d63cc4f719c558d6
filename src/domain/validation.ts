import type { z } from 'zod';
import { addDetail, newDetails, type ErrorDetails } from '../errors.ts';

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
