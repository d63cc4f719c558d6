import { z } from 'zod';
import { LIMITS } from '../../domain/model.ts';
import { boolean, integer, text } from '../../api/schemas/fields.ts';
import { Timestamp } from '../../api/schemas/envelopes.ts';
import { BULK_SEND_STATUSES, ROW_STATUSES } from './bulk-send-store.ts';

/** A row's own fields beside its roles: its document's titles (default the template's). */
export const RowTitles = z.strictObject({
  title: text('title').optional(),
  title_ar: text('title_ar').optional(),
  title_en: text('title_en').optional(),
});

/** The JSON body of POST /templates/{id}/bulk-sends (rows are checked one by one by the service). */
export const BulkSendJsonShape = z.strictObject({
  rows: z.array(z.record(z.string(), z.unknown())).meta({
    description:
      'One object per document: {<role key>: {name | name_ar + name_en, phone, role_ar, role_en, language}, title?, title_ar?, title_en?}. Row 1 is the first.',
  }),
  skip_invalid: boolean('skip_invalid').optional().meta({
    description: 'true: bad rows are reported and the others go; default false: any bad row refuses all',
  }),
});

export const BulkSendMultipart = z
  .strictObject({
    file: z.any().meta({
      type: 'string',
      format: 'binary',
      description:
        'The CSV (UTF-8, comma-separated, RFC 4180 quoting): a header of <role>.<field> columns (employee.name, employee.phone, …) and optionally title, title_ar, title_en; then one line per document',
    }),
    skip_invalid: z.enum(['true', 'false']).optional(),
  })
  .meta({ required: ['file'] });

const Counts = z.strictObject({
  rows: z.int().meta({ description: 'Rows given, invalid ones included' }),
  invalid: z.int().meta({ description: 'Rows refused by validation and skipped (skip_invalid)' }),
  pending: z.int().meta({ description: 'Rows not made yet' }),
  created: z.int().meta({ description: 'Documents made' }),
  sent: z.int().meta({ description: 'Documents sent' }),
  failed: z.int().meta({ description: 'Rows refused for good when made or sent (see their errors)' }),
  cancelled: z.int().meta({ description: 'Rows not sent because the bulk send was cancelled' }),
  approved: z.int(),
  rejected: z.int(),
  expired: z.int(),
});

export const BulkSendResource = z
  .strictObject({
    id: z.uuid(),
    template: z.strictObject({ id: z.uuid(), version: z.int().min(1) }),
    status: z.enum(BULK_SEND_STATUSES),
    counts: Counts,
    resumes_at: Timestamp.nullable().meta({
      description: "While paused_for_quota: when the messaging tier's share frees up and the sending resumes",
    }),
    created_at: Timestamp,
    updated_at: Timestamp,
    cancelled_at: Timestamp.nullable(),
    completed_at: Timestamp.nullable(),
  })
  .meta({ id: 'BulkSend' });

export const RowErrors = z.record(z.string(), z.array(z.string())).nullable();

export const BulkSendCreated = BulkSendResource.extend({
  invalid_rows: z
    .array(z.strictObject({ row: z.int().min(1), errors: z.record(z.string(), z.array(z.string())) }))
    .meta({ description: 'With skip_invalid: the rows skipped and why (field → messages)' }),
}).meta({ id: 'BulkSendCreated' });

export const BulkSendRowResource = z
  .strictObject({
    row: z.int().min(1),
    status: z.enum(ROW_STATUSES),
    document_id: z.uuid().nullable(),
    document: z
      .strictObject({ id: z.uuid(), reference: z.string().nullable(), status: z.string().nullable() })
      .nullable(),
    errors: RowErrors.meta({ description: 'invalid or failed rows: field → messages' }),
  })
  .meta({ id: 'BulkSendRow' });

export const PageQuery = z.object({
  page: integer('page', 1, 1_000_000).optional(),
  per_page: integer('per_page', 1, LIMITS.perPageMax).optional(),
});
