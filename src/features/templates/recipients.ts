import { issuesToDetails } from '../../domain/validation.ts';
import { addDetail, mergeDetails, newDetails, type ErrorDetails } from '../../errors.ts';
import type { Recipient, Role } from './roles.ts';
import { RecipientInput } from './schemas.ts';

/**
 * One document's recipients checked against the template's roles: every role filled, no other key, each person
 * valid. Problems are keyed `<path>.<role key>[.<field>]`. The keys are the client's (`__proto__`, `constructor`):
 * they are only ever compared and used as Map keys or detail names, never as object properties.
 */
export function checkRecipients(
  roles: readonly Role[],
  raw: unknown,
  path: string,
): { recipients: Map<string, Recipient>; details: ErrorDetails } {
  const recipients = new Map<string, Recipient>();
  const details = newDetails();
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    addDetail(details, path, `${path} must be an object with one recipient per role: ${roleList(roles)}`);
    return { recipients, details };
  }
  const given = raw as Record<string, unknown>;
  const keys = new Set(roles.map((r) => r.key));
  for (const key of Object.keys(given)) {
    if (!keys.has(key))
      addDetail(
        details,
        `${path}.${key}`,
        `the template has no role "${key}"; its roles are ${roleList(roles)}`,
      );
  }
  for (const role of roles) {
    if (!Object.hasOwn(given, role.key)) {
      addDetail(
        details,
        `${path}.${role.key}`,
        `a recipient for the role "${role.key}" (${role.labelEn}) is required`,
      );
      continue;
    }
    const parsed = RecipientInput.safeParse(given[role.key]);
    if (parsed.success) recipients.set(role.key, parsed.data);
    else
      for (const [field, messages] of Object.entries(issuesToDetails(parsed.error.issues)))
        addDetail(
          details,
          field === '_' ? `${path}.${role.key}` : `${path}.${role.key}.${field}`,
          ...messages,
        );
  }
  return { recipients, details: mergeDetails(details) };
}

const roleList = (roles: readonly Role[]) => roles.map((r) => r.key).join(', ');
