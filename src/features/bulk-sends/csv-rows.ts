import { Readable } from 'node:stream';
import { CsvError, parse } from 'csv-parse';
import { addDetail, newDetails, type ErrorDetails } from '../../errors.ts';
import { ROW_TITLE_FIELDS, type Role } from '../templates/roles.ts';
import type { RawRow } from './rows.ts';

/** The columns a role has in a CSV file: `<role key>.<field>`. */
export const RECIPIENT_FIELDS = [
  'name',
  'name_ar',
  'name_en',
  'phone',
  'role_ar',
  'role_en',
  'language',
] as const;

/** csv-parse is fed this much text at a time, so a large file never holds the event loop for long. */
const CHUNK_CHARS = 64 * 1024;
/** A record longer than this is refused (a stray quote that swallows the rest of the file). */
const MAX_RECORD_CHARS = 64 * 1024;

type Column = { kind: 'title'; field: string } | { kind: 'role'; role: string; field: string };

/**
 * The rows of a CSV file for a template: a header of `<role key>.<field>` columns (and optionally `title`,
 * `title_ar`, `title_en`), then one row per document. Parsed by csv-parse (RFC 4180: quoted fields with commas,
 * quotes and line breaks, CRLF or LF); a UTF-8 byte order mark is dropped; bytes that are not UTF-8 are refused, as
 * are a malformed record, duplicate or unknown columns, and more than `maxRows` rows. Empty cells count as not
 * given. Problems of the file as a whole are keyed `file`; rows come back to be checked like JSON rows.
 */
export async function csvRows(
  bytes: Uint8Array,
  roles: readonly Role[],
  maxRows: number,
): Promise<{ rows: RawRow[]; details: ErrorDetails }> {
  const details = newDetails();
  const refuse = (message: string) => {
    addDetail(details, 'file', message);
    return { rows: [], details };
  };
  let source: string;
  try {
    source = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return refuse('The file is not UTF-8 text; save it as "CSV UTF-8" and upload it again');
  }
  if (!/\S/.test(source)) return refuse('The file is empty: it needs a header line and at least one row');

  const records: string[][] = [];
  try {
    const parser = Readable.from(chunks(source)).pipe(
      parse({
        skip_empty_lines: true,
        max_record_size: MAX_RECORD_CHARS,
        // A record of the wrong length is that row's problem (reported by row number), not the whole file's.
        relax_column_count: true,
      }),
    );
    for await (const record of parser as AsyncIterable<string[]>) {
      records.push(record);
      // The header and one row more than allowed are enough to refuse; the rest is not read.
      if (records.length > maxRows + 1) {
        parser.destroy();
        return refuse(`A bulk send has at most ${maxRows} rows; this file has more`);
      }
    }
  } catch (err) {
    if (err instanceof CsvError) return refuse(`The file is not valid CSV: ${err.message}`);
    throw err;
  }
  const [header, ...data] = records;
  if (!header) return refuse('The file is empty: it needs a header line and at least one row');
  const columns = readHeader(header, roles, details);
  if (!columns) return { rows: [], details };
  if (data.length === 0) return refuse('The file has a header but no rows');
  const rows = data.map((record, i): RawRow => {
    if (record.length === columns.length) return { number: i + 1, value: rowValue(record, columns) };
    return {
      number: i + 1,
      value: null,
      problem: `the row has ${record.length} field${record.length === 1 ? '' : 's'}, the header ${columns.length}`,
    };
  });
  return { rows, details };
}

function* chunks(text: string): Generator<string> {
  for (let i = 0; i < text.length; i += CHUNK_CHARS) yield text.slice(i, i + CHUNK_CHARS);
}

/** The header's columns, or undefined when it has problems (each added to `details.file`). */
function readHeader(header: string[], roles: readonly Role[], details: ErrorDetails): Column[] | undefined {
  const keys = new Set(roles.map((r) => r.key));
  const seen = new Map<string, number>();
  const columns: Column[] = [];
  const problems: string[] = [];
  header.forEach((raw, i) => {
    const name = raw.trim();
    const earlier = seen.get(name);
    if (earlier !== undefined)
      problems.push(`column "${name}" appears twice (columns ${earlier + 1} and ${i + 1})`);
    seen.set(name, i);
    if ((ROW_TITLE_FIELDS as readonly string[]).includes(name))
      return void columns.push({ kind: 'title', field: name });
    const [role, field, ...more] = name.split('.');
    if (
      role &&
      field &&
      more.length === 0 &&
      keys.has(role) &&
      (RECIPIENT_FIELDS as readonly string[]).includes(field)
    )
      return void columns.push({ kind: 'role', role, field });
    problems.push(
      `column "${name}" is not one of this template's: use <role>.<field> with a role of ${[...keys].join(', ')} and a field of ${RECIPIENT_FIELDS.join(', ')}, or title, title_ar, title_en`,
    );
  });
  for (const role of roles) {
    if (!seen.has(`${role.key}.phone`)) problems.push(`column "${role.key}.phone" is missing`);
    if (
      !seen.has(`${role.key}.name`) &&
      !(seen.has(`${role.key}.name_ar`) && seen.has(`${role.key}.name_en`))
    )
      problems.push(
        `column "${role.key}.name" (or "${role.key}.name_ar" and "${role.key}.name_en") is missing`,
      );
  }
  if (problems.length === 0) return columns;
  addDetail(details, 'file', ...problems);
  return undefined;
}

/** A CSV record as the JSON row it stands for: `{<role>: {<field>: cell}, title: cell}`, empty cells left out. */
function rowValue(record: string[], columns: Column[]): Record<string, unknown> {
  const row = Object.create(null) as Record<string, Record<string, string> | string>;
  columns.forEach((column, i) => {
    const cell = record[i];
    if (cell === undefined || cell === '') return;
    if (column.kind === 'title') return void (row[column.field] = cell);
    const person = (row[column.role] ??= Object.create(null) as Record<string, string>) as Record<
      string,
      string
    >;
    person[column.field] = cell;
  });
  return row;
}
