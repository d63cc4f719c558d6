import type { Db } from '../../db/knex.ts';
import type { ErrorDetails } from '../../errors.ts';
import type { RowInput } from './rows.ts';

export const BULK_SEND_STATUSES = [
  'queued',
  'running',
  'paused_for_quota',
  'completed',
  'cancelled',
] as const;
export type BulkSendStatus = (typeof BULK_SEND_STATUSES)[number];
/** Statuses in which rows may still be sent. */
export const OPEN_BULK_STATUSES: readonly BulkSendStatus[] = ['queued', 'running', 'paused_for_quota'];

/**
 * A row's way: `invalid` (refused by validation, kept for its report), `pending`, then `created` (its document
 * exists, as a draft), then `sent`; or `failed` (refused for good, with its error), or `cancelled` (not sent).
 */
export const ROW_STATUSES = ['invalid', 'pending', 'created', 'sent', 'failed', 'cancelled'] as const;
export type RowStatus = (typeof ROW_STATUSES)[number];

export interface BulkSend {
  id: string;
  accountId: string;
  templateId: string;
  templateVersion: number;
  status: BulkSendStatus;
  rowsTotal: number;
  resumesAt: Date | null;
  workflowId: string;
  cancelledAt: Date | null;
  completedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface BulkSendRow {
  bulkSendId: string;
  number: number;
  status: RowStatus;
  input: RowInput | null;
  errors: ErrorDetails | null;
  documentId: string | null;
}

/** A row as GET /bulk-sends/{id}/rows shows it, with its document's reference and status. */
export interface BulkSendRowView extends Omit<BulkSendRow, 'input'> {
  documentReference: string | null;
  documentStatus: string | null;
}

export interface BulkSendCounts {
  rows: number;
  invalid: number;
  pending: number;
  created: number;
  sent: number;
  failed: number;
  cancelled: number;
  approved: number;
  rejected: number;
  expired: number;
}

interface BulkSendDbRow {
  id: string;
  account_id: string;
  template_id: string;
  template_version: number;
  status: BulkSendStatus;
  rows_total: number;
  resumes_at: Date | null;
  workflow_id: string;
  cancelled_at: Date | null;
  completed_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

interface RowDbRow {
  bulk_send_id: string;
  row_number: number;
  status: RowStatus;
  input: RowInput | null;
  errors: ErrorDetails | null;
  document_id: string | null;
}

const toBulkSend = (r: BulkSendDbRow): BulkSend => ({
  id: r.id,
  accountId: r.account_id,
  templateId: r.template_id,
  templateVersion: r.template_version,
  status: r.status,
  rowsTotal: r.rows_total,
  resumesAt: r.resumes_at,
  workflowId: r.workflow_id,
  cancelledAt: r.cancelled_at,
  completedAt: r.completed_at,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const toRow = (r: RowDbRow): BulkSendRow => ({
  bulkSendId: r.bulk_send_id,
  number: r.row_number,
  status: r.status,
  input: r.input,
  errors: r.errors,
  documentId: r.document_id,
});

export const EMPTY_COUNTS: BulkSendCounts = {
  rows: 0,
  invalid: 0,
  pending: 0,
  created: 0,
  sent: 0,
  failed: 0,
  cancelled: 0,
  approved: 0,
  rejected: 0,
  expired: 0,
};

const INSERT_BATCH = 1000;

/** The bulk sends themselves: made with their rows, found, listed. */
function bulkSendRecords(db: Db) {
  return {
    async insert(
      bulk: Pick<BulkSend, 'id' | 'accountId' | 'templateId' | 'templateVersion' | 'workflowId'>,
      rows: { number: number; status: 'pending' | 'invalid'; input?: RowInput; errors?: ErrorDetails }[],
    ): Promise<BulkSend> {
      const [row] = await db('bulk_sends')
        .insert({
          id: bulk.id,
          account_id: bulk.accountId,
          template_id: bulk.templateId,
          template_version: bulk.templateVersion,
          status: 'queued',
          rows_total: rows.length,
          workflow_id: bulk.workflowId,
        })
        .returning<BulkSendDbRow[]>('*');
      for (let i = 0; i < rows.length; i += INSERT_BATCH) {
        await db('bulk_send_rows').insert(
          rows.slice(i, i + INSERT_BATCH).map((r) => ({
            bulk_send_id: bulk.id,
            row_number: r.number,
            status: r.status,
            input: r.input ? JSON.stringify(r.input) : null,
            errors: r.errors ? JSON.stringify(r.errors) : null,
          })),
        );
      }
      return toBulkSend(row!);
    },

    async findById(
      accountId: string,
      id: string,
      options: { lock?: 'update' | 'share' } = {},
    ): Promise<BulkSend | undefined> {
      const query = db<BulkSendDbRow>('bulk_sends').where({ id, account_id: accountId });
      const locked =
        options.lock === 'update' ? query.forUpdate() : options.lock === 'share' ? query.forShare() : query;
      const row = await locked.first();
      return row && toBulkSend(row);
    },

    /** For the workflow's activities, which hold an id rather than an account. */
    async findUnscoped(id: string, options: { lock?: 'share' } = {}): Promise<BulkSend | undefined> {
      const query = db<BulkSendDbRow>('bulk_sends').where({ id });
      const row = await (options.lock === 'share' ? query.forShare() : query).first();
      return row && toBulkSend(row);
    },

    async list(
      accountId: string,
      page: { limit: number; offset: number },
    ): Promise<{ items: BulkSend[]; total: number }> {
      const [{ total }] = (await db('bulk_sends')
        .where({ account_id: accountId })
        .count<{ total: number }[]>({ total: '*' })) as [{ total: number }];
      const rows = await db<BulkSendDbRow>('bulk_sends')
        .where({ account_id: accountId })
        .orderBy([
          { column: 'created_at', order: 'desc' },
          { column: 'id', order: 'desc' },
        ])
        .limit(page.limit)
        .offset(page.offset);
      return { items: rows.map(toBulkSend), total: Number(total) };
    },
  };
}

/** Rows as the API and the results CSV show them, with their documents, and counts of both by status. */
function bulkSendRowReads(db: Db) {
  return {
    /** Counts of rows by status and of their documents by status, for each bulk send named. */
    async counts(ids: readonly string[]): Promise<Map<string, BulkSendCounts>> {
      const out = new Map<string, BulkSendCounts>();
      if (ids.length === 0) return out;
      const { rows } = await db.raw<{ rows: (Record<keyof BulkSendCounts, number> & { id: string })[] }>(
        `SELECT r.bulk_send_id AS id,
                count(*)::int AS rows,
                count(*) FILTER (WHERE r.status = 'invalid')::int AS invalid,
                count(*) FILTER (WHERE r.status = 'pending')::int AS pending,
                count(*) FILTER (WHERE r.document_id IS NOT NULL)::int AS created,
                count(*) FILTER (WHERE r.status = 'sent')::int AS sent,
                count(*) FILTER (WHERE r.status = 'failed')::int AS failed,
                count(*) FILTER (WHERE r.status = 'cancelled')::int AS cancelled,
                count(*) FILTER (WHERE d.status = 'approved')::int AS approved,
                count(*) FILTER (WHERE d.status = 'rejected')::int AS rejected,
                count(*) FILTER (WHERE d.status = 'expired')::int AS expired
           FROM bulk_send_rows r LEFT JOIN documents d ON d.id = r.document_id
          WHERE r.bulk_send_id IN (${ids.map(() => '?').join(', ')})
          GROUP BY r.bulk_send_id`,
        [...ids],
      );
      for (const { id, ...counts } of rows) out.set(id, counts);
      return out;
    },

    async rows(bulkSendId: string, page: { limit: number; offset: number }): Promise<BulkSendRowView[]> {
      const rows = await db('bulk_send_rows as r')
        .leftJoin('documents as d', 'd.id', 'r.document_id')
        .where('r.bulk_send_id', bulkSendId)
        .orderBy('r.row_number')
        .limit(page.limit)
        .offset(page.offset)
        .select<(RowDbRow & { reference: string | null; document_status: string | null })[]>(
          'r.bulk_send_id',
          'r.row_number',
          'r.status',
          'r.errors',
          'r.document_id',
          'd.reference',
          'd.status as document_status',
        );
      return rows.map((r) => ({
        ...toRow({ ...r, input: null }),
        documentReference: r.reference,
        documentStatus: r.document_status,
      }));
    },

    /** Every row, for the CSV of results (row, status, document, error), in order. */
    async allRows(bulkSendId: string): Promise<BulkSendRowView[]> {
      return this.rows(bulkSendId, { limit: 1_000_000, offset: 0 });
    },
  };
}

/** What a bulk send does as it goes: its next rows, one locked while its document is made, its outcome, the status of the whole, and the rest cancelled. */
function bulkSendProgress(db: Db) {
  return {
    /** Rows still to make or send after `afterRow`, in order. */
    async nextRows(bulkSendId: string, afterRow: number, limit: number): Promise<BulkSendRow[]> {
      const rows = await db<RowDbRow>('bulk_send_rows')
        .where({ bulk_send_id: bulkSendId })
        .whereIn('status', ['pending', 'created'])
        .andWhere('row_number', '>', afterRow)
        .orderBy('row_number')
        .limit(limit);
      return rows.map(toRow);
    },

    /** The row, locked until the transaction ends: one maker of its document at a time. */
    async lockRow(bulkSendId: string, number: number): Promise<BulkSendRow | undefined> {
      const row = await db<RowDbRow>('bulk_send_rows')
        .where({ bulk_send_id: bulkSendId, row_number: number })
        .forUpdate()
        .first();
      return row && toRow(row);
    },

    async setRow(
      bulkSendId: string,
      number: number,
      patch: { status: RowStatus; documentId?: string; errors?: ErrorDetails },
    ): Promise<void> {
      await db('bulk_send_rows')
        .where({ bulk_send_id: bulkSendId, row_number: number })
        .update({
          status: patch.status,
          ...(patch.documentId !== undefined && { document_id: patch.documentId }),
          ...(patch.errors !== undefined && { errors: JSON.stringify(patch.errors) }),
          updated_at: db.fn.now(),
        });
    },

    /** Moves the bulk send from one of `from` to `to`; undefined when it was not in one of them. */
    async transition(
      id: string,
      from: readonly BulkSendStatus[],
      to: BulkSendStatus,
      extra: { resumesAt?: Date | null; cancelledAt?: Date; completedAt?: Date } = {},
    ): Promise<BulkSend | undefined> {
      const [row] = await db('bulk_sends')
        .where({ id })
        .whereIn('status', from)
        .update({
          status: to,
          ...(extra.resumesAt !== undefined && { resumes_at: extra.resumesAt }),
          ...(extra.cancelledAt && { cancelled_at: extra.cancelledAt }),
          ...(extra.completedAt && { completed_at: extra.completedAt }),
          updated_at: db.fn.now(),
        })
        .returning<BulkSendDbRow[]>('*');
      return row && toBulkSend(row);
    },

    /** Every row not sent yet becomes `cancelled` (its draft, if made, stays a draft). */
    async cancelRemaining(bulkSendId: string): Promise<number> {
      return db('bulk_send_rows')
        .where({ bulk_send_id: bulkSendId })
        .whereIn('status', ['pending', 'created'])
        .update({ status: 'cancelled', updated_at: db.fn.now() });
    },
  };
}

/** `bulk_sends` and `bulk_send_rows`. Reads an API key can cause are scoped by account. */
export function bulkSendStore(db: Db) {
  return { ...bulkSendRecords(db), ...bulkSendRowReads(db), ...bulkSendProgress(db) };
}

export type BulkSendStore = ReturnType<typeof bulkSendStore>;
