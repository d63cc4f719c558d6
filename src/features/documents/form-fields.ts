import { addDetail, newDetails, type ErrorDetails } from '../../errors.ts';
import { LIMITS } from '../../domain/model.ts';

const REMINDERS_PART = /^reminders\[([a-z_]{1,32})\]$/;

/** A list field a form can send as one JSON part or as `name[N][field]` parts. */
interface ListField {
  name: 'approvers' | 'cc';
  /** Whether a part name is one of this field's (or a misspelling of one, refused with a hint). */
  claims(name: string): boolean;
  /** `name[N][field]`: N of at most three digits, field a snake_case key. */
  part: RegExp;
  max: number;
  /** The list's entries, as one sentence: "approvers", "cc recipients". */
  noun: string;
  jsonMessage: string;
  tooMany: string;
  example: string;
}

const LIST_FIELDS: readonly ListField[] = [
  {
    name: 'approvers',
    claims: (name) => name.startsWith('approvers'),
    part: /^approvers\[(\d{1,3})\]\[([a-z_]{1,32})\]$/,
    max: LIMITS.approversMax,
    noun: 'approvers',
    jsonMessage:
      'the approvers part must hold a JSON array of approvers (or send approvers[N][field] parts instead)',
    tooMany: `A document can have at most ${LIMITS.approversMax} approvers`,
    example: 'approvers[0][phone]',
  },
  {
    name: 'cc',
    claims: (name) => name === 'cc' || name.startsWith('cc[') || name.startsWith('cc.'),
    part: /^cc\[(\d{1,3})\]\[([a-z_]{1,32})\]$/,
    max: LIMITS.ccMax,
    noun: 'cc recipients',
    jsonMessage:
      'the cc part must hold a JSON array of recipients {phone, language, name} (or send cc[N][field] parts instead)',
    tooMany: `A document can have at most ${LIMITS.ccMax} cc recipients`,
    example: 'cc[0][phone]',
  },
];

/** One list field's parts as they arrive: its JSON part, or its indexed entries (null-prototype objects). */
interface ListParts {
  json: boolean;
  entries: Map<number, Record<string, unknown>>;
}

/**
 * Multipart parts → the object the JSON schemas validate. Approvers (and cc recipients) come either as one
 * `approvers` (`cc`) part holding their JSON array (the OpenAPI document's form) or as `approvers[N][field]`
 * (`cc[N][field]`) parts, which become `approvers[N].field`. Empty parts count as not given (HTML forms send every
 * input), and so do parts without a name. A field given twice becomes the list of its values, which the schema of
 * a single-valued field refuses, rather than one of them silently chosen. Indexes must run from 0 without gaps, so
 * an error at `approvers.2.phone` names the part the client sent as `approvers[2][phone]`.
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
  const lists = new Map<ListField, ListParts>(
    LIST_FIELDS.map((field) => [field, { json: false, entries: new Map() }]),
  );
  let jsonReminders = false;
  for (const [name, raw] of fields) {
    // busboy reports a part with an empty name as one without a name (undefined).
    if (raw === '' || typeof name !== 'string' || name === '') continue;
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
    } else {
      const list = LIST_FIELDS.find((field) => field.claims(name));
      if (list) listPart(list, lists.get(list)!, name, raw, value, errors);
      else add(value, name, raw);
    }
  }
  for (const [field, parts] of lists) settleList(field, parts, value, errors);
  return { value, errors };
}

/** One part of a list field: its JSON part, an indexed `name[N][field]` part, or a misspelling (an error). */
function listPart(
  field: ListField,
  parts: ListParts,
  name: string,
  raw: string,
  value: Record<string, unknown>,
  errors: ErrorDetails,
): void {
  const indexed = field.part.exec(name);
  if (indexed) {
    const index = Number(indexed[1]);
    let entry = parts.entries.get(index);
    if (!entry) {
      entry = Object.create(null) as Record<string, unknown>;
      parts.entries.set(index, entry);
    }
    add(entry, indexed[2]!, raw);
  } else if (name === field.name) {
    if (parts.json) {
      addDetail(errors, field.name, `give the ${field.noun} once: one part holding the JSON array`);
      return;
    }
    parts.json = true;
    try {
      value[name] = JSON.parse(raw) as unknown;
    } catch {
      addDetail(errors, field.name, field.jsonMessage);
    }
  } else if (field.name === 'approvers') {
    addDetail(errors, name, `approver fields are sent as approvers[N][field], e.g. ${field.example}`);
  } else {
    addDetail(errors, name, `${field.noun} are sent as ${field.name}[N][field], e.g. ${field.example}`);
  }
}

/** Indexed entries become the list, numbered from 0 without gaps and within the limit; never beside a JSON part. */
function settleList(
  field: ListField,
  parts: ListParts,
  value: Record<string, unknown>,
  errors: ErrorDetails,
) {
  if (parts.entries.size === 0) return;
  if (parts.json) {
    addDetail(
      errors,
      field.name,
      `give the ${field.noun} either as one JSON part or as ${field.name}[N][field] parts, not both`,
    );
    return;
  }
  const indexes = [...parts.entries.keys()].sort((a, b) => a - b);
  if (indexes.length > field.max) addDetail(errors, field.name, field.tooMany);
  else if (indexes.some((n, i) => n !== i)) {
    addDetail(errors, field.name, `${field.name} must be numbered from ${field.name}[0] without gaps`);
  } else value[field.name] = indexes.map((i) => parts.entries.get(i)!);
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
