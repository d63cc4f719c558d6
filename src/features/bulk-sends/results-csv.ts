import type { BulkSendRowView } from './bulk-send-store.ts';

/**
 * A cell a spreadsheet would read as a formula (=, +, -, @, or a tab or carriage return before one) is written
 * with a leading apostrophe, so opening the file never runs anything (OWASP's CSV injection advice); every cell
 * is quoted when it holds a comma, a quote or a line break.
 */
export function csvCell(value: string | number | null | undefined): string {
  let text = value === null || value === undefined ? '' : String(value);
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export const RESULT_COLUMNS = [
  'row',
  'status',
  'document_id',
  'reference',
  'document_status',
  'errors',
] as const;

/** The rows' results as CSV (UTF-8 with a byte order mark, so spreadsheets read Arabic right; CRLF lines). */
export function resultsCsv(rows: readonly BulkSendRowView[]): string {
  const lines = [RESULT_COLUMNS.join(',')];
  for (const r of rows) {
    const errors = r.errors
      ? Object.entries(r.errors)
          .map(([field, messages]) =>
            field === '_' ? messages.join('; ') : `${field}: ${messages.join('; ')}`,
          )
          .join(' | ')
      : '';
    lines.push(
      [r.number, r.status, r.documentId, r.documentReference, r.documentStatus, errors]
        .map(csvCell)
        .join(','),
    );
  }
  return `\uFEFF${lines.join('\r\n')}\r\n`;
}
