import { randomUUID } from 'node:crypto';
import type { BulkSendSettings } from '../../config.ts';
import type { Knex } from '../../db/knex.ts';
import { AppError, addDetail, mergeDetails, newDetails, type ErrorDetails } from '../../errors.ts';
import { loadTemplate } from '../templates/template-service.ts';
import { bulkSendStore, EMPTY_COUNTS, type BulkSend, type BulkSendCounts } from './bulk-send-store.ts';
import type { BulkSendClient } from './client.ts';
import { lockCreation } from './creation-lock.ts';
import { csvRows } from './csv-rows.ts';
import { bulkSendWorkflowId } from './definitions.ts';
import { checkRows, type CheckedRow, type RawRow } from './rows.ts';

export interface BulkSendDeps {
  db: Knex;
  bulkSends: BulkSendClient;
  settings: BulkSendSettings;
}

/** What a client sent: JSON rows, or a CSV file's bytes. */
export type BulkSendSource = { rows: unknown } | { csv: Uint8Array };

export interface CheckedBulkSend {
  templateId: string;
  version: number;
  valid: CheckedRow[];
  invalid: CheckedRow[];
  /** Every problem, the rows' keyed `rows.<n>.<field>`, the file's `file`. */
  details: ErrorDetails;
}

/** The rows as given, or the problems that stop them being read at all (keyed `rows` or `file`). */
async function rawRows(
  source: BulkSendSource,
  roles: Parameters<typeof csvRows>[1],
  maxRows: number,
): Promise<{ rows: RawRow[]; details: ErrorDetails }> {
  if ('csv' in source) return csvRows(source.csv, roles, maxRows);
  const details = newDetails();
  if (!Array.isArray(source.rows)) addDetail(details, 'rows', 'rows must be a list of rows');
  else if (source.rows.length > maxRows)
    addDetail(details, 'rows', `A bulk send has at most ${maxRows} rows; this one has ${source.rows.length}`);
  else return { rows: source.rows.map((value: unknown, i) => ({ number: i + 1, value })), details };
  return { rows: [], details };
}

/**
 * Every row checked against the template's current version, before anything is made or sent: what
 * POST /templates/{id}/bulk-sends and the dashboard's check both show.
 */
export async function checkBulkSend(
  deps: Pick<BulkSendDeps, 'db' | 'settings'>,
  input: { accountId: string; templateId: string; source: BulkSendSource },
): Promise<CheckedBulkSend> {
  const { template, version } = await loadTemplate(deps.db, {
    accountId: input.accountId,
    id: input.templateId,
    usable: true,
  });
  const read = await rawRows(input.source, version.roles, deps.settings.maxRows);
  const where = 'csv' in input.source ? 'file' : 'rows';
  if (Object.keys(read.details).length === 0 && read.rows.length === 0)
    addDetail(read.details, where, 'A bulk send needs at least one row');
  const checked = checkRows(version.roles, read.rows);
  return {
    templateId: template.id,
    version: version.version,
    valid: checked.valid,
    invalid: checked.invalid,
    details: mergeDetails(read.details, checked.details),
  };
}

/**
 * POST /templates/{id}/bulk-sends: every row checked first; any bad row refuses the whole list (422 naming each
 * by number) unless `skipInvalid`, when bad rows are kept as `invalid` and the others go. The bulk send, its rows
 * and its workflow's start are one transaction: a creation that fails leaves nothing, and the workflow (which
 * waits for that transaction, creation-lock.ts) finds nothing and ends.
 */
export async function createBulkSend(
  deps: BulkSendDeps,
  input: { accountId: string; templateId: string; source: BulkSendSource; skipInvalid: boolean },
): Promise<{ bulkSend: BulkSend; counts: BulkSendCounts; invalid: CheckedRow[] }> {
  const checked = await checkBulkSend(deps, input);
  const rowProblems = checked.invalid.length > 0;
  const otherProblems = Object.keys(checked.details).some((k) => !k.startsWith('rows.'));
  if (otherProblems || (rowProblems && !input.skipInvalid)) throw AppError.validation(checked.details);
  if (checked.valid.length === 0)
    throw AppError.validation({ ...checked.details, rows: ['No row is valid'] });

  const id = randomUUID();
  const rows = [
    ...checked.valid.map((r) => ({ number: r.number, status: 'pending' as const, input: r.input! })),
    ...checked.invalid.map((r) => ({ number: r.number, status: 'invalid' as const, errors: r.errors! })),
  ].sort((a, b) => a.number - b.number);
  const bulkSend = await deps.db.transaction(async (trx) => {
    await lockCreation(trx, id);
    const created = await bulkSendStore(trx).insert(
      {
        id,
        accountId: input.accountId,
        templateId: checked.templateId,
        templateVersion: checked.version,
        workflowId: bulkSendWorkflowId(id),
      },
      rows,
    );
    await deps.bulkSends.start(id);
    return created;
  });
  const counts = {
    ...EMPTY_COUNTS,
    rows: rows.length,
    invalid: checked.invalid.length,
    pending: checked.valid.length,
  };
  return { bulkSend, counts, invalid: checked.invalid };
}
