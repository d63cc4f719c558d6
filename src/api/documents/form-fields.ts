import type { ErrorDetails } from '../../errors.ts';
import { LIMITS } from '../../domain/model.ts';

const APPROVER_PART = /^approvers\[(\d{1,3})\]\[([a-z_]{1,32})\]$/;

/**
 * Multipart parts → the object the JSON schemas validate: `approvers[N][field]` parts become `approvers[N].field`.
 * Empty parts count as not given (HTML forms send every input). Indexes must run from 0 without gaps, so an error
 * at `approvers.2.phone` names the part the client sent as `approvers[2][phone]`.
 */
export function formFieldsToObject(fields: readonly [string, string][]): {
  value: Record<string, unknown>;
  errors: ErrorDetails;
} {
  const value: Record<string, unknown> = {};
  const errors: ErrorDetails = {};
  const approvers = new Map<number, Record<string, string>>();
  for (const [name, raw] of fields) {
    if (raw === '') continue;
    const part = APPROVER_PART.exec(name);
    if (part) {
      const index = Number(part[1]);
      const entry = approvers.get(index) ?? {};
      entry[part[2]!] = raw;
      approvers.set(index, entry);
    } else if (name.startsWith('approvers')) {
      (errors[name] ??= []).push('approver fields are sent as approvers[N][field], e.g. approvers[0][phone]');
    } else {
      value[name] = raw;
    }
  }
  if (approvers.size > 0) {
    const indexes = [...approvers.keys()].sort((a, b) => a - b);
    if (indexes.length > LIMITS.approversMax) {
      errors.approvers = [`A document can have at most ${LIMITS.approversMax} approvers`];
    } else if (indexes.some((n, i) => n !== i)) {
      errors.approvers = ['approvers must be numbered from approvers[0] without gaps'];
    } else {
      value.approvers = indexes.map((i) => approvers.get(i)!);
    }
  }
  return { value, errors };
}

/** Merges field problems found at different stages into one `details` map. */
export function mergeDetails(...all: ErrorDetails[]): ErrorDetails {
  const out: ErrorDetails = {};
  for (const details of all)
    for (const [field, messages] of Object.entries(details)) (out[field] ??= []).push(...messages);
  return out;
}
