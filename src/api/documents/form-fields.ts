import { addDetail, newDetails, type ErrorDetails } from '../../errors.ts';
import { LIMITS } from '../../domain/model.ts';

const APPROVER_PART = /^approvers\[(\d{1,3})\]\[([a-z_]{1,32})\]$/;

/**
 * Multipart parts → the object the JSON schemas validate: `approvers[N][field]` parts become `approvers[N].field`.
 * Empty parts count as not given (HTML forms send every input). Indexes must run from 0 without gaps, so an error
 * at `approvers.2.phone` names the part the client sent as `approvers[2][phone]`.
 *
 * Part names are the client's: the objects built here have no prototype, so a part named `constructor`,
 * `__proto__` or `approvers[0][__proto__]` is an ordinary (ignored) field, never an inherited property.
 */
export function formFieldsToObject(fields: readonly [string, string][]): {
  value: Record<string, unknown>;
  errors: ErrorDetails;
} {
  const value = Object.create(null) as Record<string, unknown>;
  const errors = newDetails();
  const approvers = new Map<number, Record<string, string>>();
  for (const [name, raw] of fields) {
    if (raw === '') continue;
    const part = APPROVER_PART.exec(name);
    if (part) {
      const index = Number(part[1]);
      let entry = approvers.get(index);
      if (!entry) {
        entry = Object.create(null) as Record<string, string>;
        approvers.set(index, entry);
      }
      entry[part[2]!] = raw;
    } else if (name.startsWith('approvers')) {
      addDetail(errors, name, 'approver fields are sent as approvers[N][field], e.g. approvers[0][phone]');
    } else {
      value[name] = raw;
    }
  }
  if (approvers.size > 0) {
    const indexes = [...approvers.keys()].sort((a, b) => a - b);
    if (indexes.length > LIMITS.approversMax) {
      addDetail(errors, 'approvers', `A document can have at most ${LIMITS.approversMax} approvers`);
    } else if (indexes.some((n, i) => n !== i)) {
      addDetail(errors, 'approvers', 'approvers must be numbered from approvers[0] without gaps');
    } else {
      value.approvers = indexes.map((i) => approvers.get(i)!);
    }
  }
  return { value, errors };
}
