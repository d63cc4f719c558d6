import { issuesToDetails } from '../../domain/validation.ts';
import { addDetail, mergeDetails, newDetails, type ErrorDetails } from '../../errors.ts';
import { checkRecipients } from '../templates/recipients.ts';
import { ROW_TITLE_FIELDS, type Recipient, type Role } from '../templates/roles.ts';
import { RowTitles } from './schemas.ts';

/** One row of a bulk send as the client gave it (JSON, or a CSV line made into the same shape). */
export interface RawRow {
  /** 1 for the first data row (a CSV header is not a row). */
  number: number;
  value: unknown;
  /** A problem found before the row's fields could be read (a CSV record of the wrong length). */
  problem?: string;
}

/** A row that passed: its recipients by role, and the titles it sets for its own document. */
export interface RowInput {
  recipients: [string, Recipient][];
  titleAr?: string;
  titleEn?: string;
}

export interface CheckedRow {
  number: number;
  input?: RowInput;
  /** Problems by field, without the `rows.<n>.` prefix. */
  errors?: ErrorDetails;
}

/**
 * Checks one row against the template's roles: a recipient for every role (the document's own rules for names and
 * phones), no unknown role, and optional titles. A row is an object keyed by role key (and title fields); its keys
 * are the client's and are only compared, never used as properties of our objects.
 */
export function checkRow(roles: readonly Role[], row: RawRow): CheckedRow {
  if (row.problem) return { number: row.number, errors: { _: [row.problem] } };
  const value = row.value;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return {
      number: row.number,
      errors: { _: ['each row must be an object {<role key>: {name, phone, …}}'] },
    };
  }
  const given = value as Record<string, unknown>;
  const people = Object.create(null) as Record<string, unknown>;
  const titles = Object.create(null) as Record<string, unknown>;
  for (const key of Object.keys(given)) {
    const target = (ROW_TITLE_FIELDS as readonly string[]).includes(key) ? titles : people;
    Object.defineProperty(target, key, { value: given[key], enumerable: true });
  }
  const checked = checkRecipients(roles, people, '');
  const details = newDetails();
  for (const [field, messages] of Object.entries(checked.details))
    addDetail(details, field.slice(1), ...messages);
  const t = RowTitles.safeParse(titles);
  const errors = mergeDetails(details, t.success ? {} : issuesToDetails(t.error.issues));
  if (Object.keys(errors).length || !t.success) return { number: row.number, errors };
  const titleAr = t.data.title_ar ?? t.data.title;
  const titleEn = t.data.title_en ?? t.data.title;
  return {
    number: row.number,
    input: {
      recipients: roles.map((r) => [r.key, checked.recipients.get(r.key)!]),
      ...(titleAr !== undefined && { titleAr }),
      ...(titleEn !== undefined && { titleEn }),
    },
  };
}

/** Every row checked; `details` keys each problem `rows.<row number>.<field>` for the 422. */
export function checkRows(
  roles: readonly Role[],
  rows: readonly RawRow[],
): { valid: CheckedRow[]; invalid: CheckedRow[]; details: ErrorDetails } {
  const valid: CheckedRow[] = [];
  const invalid: CheckedRow[] = [];
  const details = newDetails();
  for (const row of rows) {
    const checked = checkRow(roles, row);
    if (!checked.errors) {
      valid.push(checked);
      continue;
    }
    invalid.push(checked);
    for (const [field, messages] of Object.entries(checked.errors))
      addDetail(details, field === '_' ? `rows.${row.number}` : `rows.${row.number}.${field}`, ...messages);
  }
  return { valid, invalid, details };
}
