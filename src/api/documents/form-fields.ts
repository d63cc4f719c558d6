import { addDetail, newDetails, type ErrorDetails } from '../../errors.ts';
import { LIMITS } from '../../domain/model.ts';

const APPROVER_PART = /^approvers\[(\d{1,3})\]\[([a-z_]{1,32})\]$/;
const REMINDERS_PART = /^reminders\[([a-z_]{1,32})\]$/;
const JSON_APPROVERS =
  'the approvers part must hold a JSON array of approvers (or send approvers[N][field] parts instead)';

/**
 * Multipart parts → the object the JSON schemas validate. Approvers come either as one `approvers` part holding
 * their JSON array (the OpenAPI document's form) or as `approvers[N][field]` parts, which become
 * `approvers[N].field`. Empty parts count as not given (HTML forms send every input), and so do parts without a
 * name. A field given twice becomes the list of its values, which the schema of a single-valued field refuses,
 * rather than one of them silently chosen. Indexes must run from 0 without gaps, so an error at
 * `approvers.2.phone` names the part the client sent as `approvers[2][phone]`.
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
  const approvers = new Map<number, Record<string, unknown>>();
  let jsonApprovers = false;
  let jsonReminders = false;
  for (const [name, raw] of fields) {
    // busboy reports a part with an empty name as one without a name (undefined).
    if (raw === '' || typeof name !== 'string' || name === '') continue;
    const part = APPROVER_PART.exec(name);
    const reminder = REMINDERS_PART.exec(name);
    if (reminder) {
      // reminders[first_after_hours] etc. become reminders.first_after_hours (the schema refuses unknown keys).
      if (!Object.hasOwn(value, 'reminders')) {
        Object.defineProperty(value, 'reminders', {
          value: Object.create(null) as Record<string, unknown>,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      const target = value.reminders;
      if (!jsonReminders && typeof target === 'object' && target !== null && !Array.isArray(target)) {
        add(target as Record<string, unknown>, reminder[1]!, raw);
      } else {
        addDetail(
          errors,
          'reminders',
          'give reminders either as one JSON part or as reminders[field] parts, not both',
        );
      }
    } else if (name === 'reminders') {
      // The OpenAPI form: one part holding the JSON object (as the approvers part holds its array).
      if (Object.hasOwn(value, 'reminders')) {
        addDetail(errors, 'reminders', 'give reminders once: one JSON part or reminders[field] parts');
        continue;
      }
      try {
        const parsed = JSON.parse(raw) as unknown;
        jsonReminders = true;
        Object.defineProperty(value, name, {
          value: parsed,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      } catch {
        addDetail(
          errors,
          'reminders',
          'the reminders part must hold a JSON object {first_after_hours, every_hours, max}',
        );
      }
    } else if (name === 'cc') {
      // One part holding the JSON array of recipients (as the approvers part holds its array).
      if (Object.hasOwn(value, 'cc')) {
        addDetail(errors, 'cc', 'give cc once: one part holding the JSON array');
        continue;
      }
      try {
        value.cc = JSON.parse(raw) as unknown;
      } catch {
        addDetail(errors, 'cc', 'the cc part must hold a JSON array of recipients {phone, language, name}');
      }
    } else if (part) {
      const index = Number(part[1]);
      let entry = approvers.get(index);
      if (!entry) {
        entry = Object.create(null) as Record<string, unknown>;
        approvers.set(index, entry);
      }
      add(entry, part[2]!, raw);
    } else if (name === 'approvers') {
      if (jsonApprovers) {
        add(value, name, raw); // a second approvers part: refused below as a list of texts
        continue;
      }
      jsonApprovers = true;
      try {
        value.approvers = JSON.parse(raw) as unknown;
      } catch {
        addDetail(errors, 'approvers', JSON_APPROVERS);
      }
    } else if (name.startsWith('approvers')) {
      addDetail(errors, name, 'approver fields are sent as approvers[N][field], e.g. approvers[0][phone]');
    } else {
      add(value, name, raw);
    }
  }
  if (approvers.size > 0 && jsonApprovers) {
    addDetail(
      errors,
      'approvers',
      'give the approvers either as one JSON part or as approvers[N][field] parts, not both',
    );
  } else if (approvers.size > 0) {
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

/** Sets a field; a repeated field collects its values in a list. */
function add(target: Record<string, unknown>, name: string, raw: string): void {
  if (!Object.hasOwn(target, name)) {
    Object.defineProperty(target, name, { value: raw, enumerable: true, writable: true, configurable: true });
    return;
  }
  const current = target[name];
  target[name] = Array.isArray(current) ? [...(current as unknown[]), raw] : [current, raw];
}
