import { z } from 'zod';
import type { ApproverInput, DocumentInput, DocumentUpdate } from './inputs.ts';
import {
  DOCUMENT_STATUSES,
  LANGUAGES,
  LIMITS,
  WORKFLOW_TYPES,
  type CcRecipient,
} from '../../domain/model.ts';
import type { SerializedDocument } from './serialize.ts';
import { ApproverInputSchema, ApproverResource, Phone } from './approvers-schemas.ts';
import { Timestamp } from '../../api/schemas/envelopes.ts';
import {
  ALWAYS_ON_OBJECTS,
  boolean,
  integer,
  oneOf,
  requireBilingual,
  text,
} from '../../api/schemas/fields.ts';

const DEPARTMENT = /^[a-z][a-z0-9_-]{0,31}$/;

// null or "" clear it; '' never reaches the union (it becomes null first), it is there for the OpenAPI document.
const Department = z.preprocess(
  (v) => (v === '' ? null : v),
  z
    .union(
      [
        z.literal(''),
        z.string().regex(DEPARTMENT, {
          error: 'department must be a lowercase key: a letter, then up to 31 letters, digits, _ or -',
        }),
      ],
      { error: 'department must be a string' },
    )
    .nullable(),
);

const Approvers = z
  .array(ApproverInputSchema, { error: 'approvers must be a list of approvers' })
  .max(LIMITS.approversMax, { error: `A document can have at most ${LIMITS.approversMax} approvers` });

/**
 * Automatic reminders. `max` is bounded statically (the OpenAPI document is the same for every
 * deployment); reminders beyond REMIND_MAX_PER_APPROVER are not sent.
 */
export const Reminders = z
  .strictObject(
    {
      first_after_hours: integer('reminders.first_after_hours', 1, LIMITS.reminderHoursMax).meta({
        description: "Hours from an approver's notification to their first automatic reminder",
      }),
      every_hours: integer('reminders.every_hours', 1, LIMITS.reminderHoursMax).meta({
        description: 'Hours between automatic reminders after the first',
      }),
      max: integer('reminders.max', 0, LIMITS.remindersMaxCeiling).meta({
        description:
          'Automatic reminders per approver; 0 turns automatic reminders off, including the "expires tomorrow" one. Manual and automatic reminders together stop at REMIND_MAX_PER_APPROVER (default 5): one beyond it is not sent',
      }),
    },
    {
      error: (iss) =>
        iss.code === 'unrecognized_keys'
          ? `reminders takes only first_after_hours, every_hours and max`
          : 'reminders must be an object {first_after_hours, every_hours, max}',
    },
  )
  .meta({
    id: 'Reminders',
    description:
      'Automatic WhatsApp reminders to each notified approver who has not acted: the first first_after_hours after their notification, then every every_hours, at most max; plus one "expires tomorrow" reminder 24 hours before the deadline (when the approver was notified more than 24 hours before it). Stopped by the approver\'s action, a void, a rejection or expiry. Each counts against REMIND_MAX_PER_APPROVER with manual reminders; one beyond it is not sent.',
  });

/** One recipient of the signed copy besides the approvers. */
const CcRecipientInput = z
  .strictObject(
    {
      phone: Phone,
      language: oneOf('language', LANGUAGES)
        .nullable()
        .optional()
        .meta({ description: 'Language of the message; default Arabic for Saudi numbers, else English' }),
      name: text('name')
        .nullable()
        .optional()
        .meta({ description: 'The name the message greets (optional)' }),
    },
    {
      error: (iss) =>
        iss.code === 'unrecognized_keys'
          ? 'a cc recipient takes only phone, language and name'
          : 'each cc recipient must be an object {phone, language, name}',
    },
  )
  // The phone's preprocessing hides from the generated JSON Schema that it is required (as on approvers).
  .meta({ required: ['phone'] })
  .transform((v): CcRecipient => ({ phone: v.phone, language: v.language ?? null, name: v.name ?? null }));

/** A number given twice is kept once, as first given. */
const Cc = z
  .array(CcRecipientInput, { error: 'cc must be a list of recipients {phone, language, name}' })
  .max(LIMITS.ccMax, { error: `cc lists at most ${LIMITS.ccMax} recipients` })
  .transform((list) => list.filter((c, i) => list.findIndex((o) => o.phone === c.phone) === i))
  .meta({
    description: `Who else receives the signed PDF over WhatsApp once the document is approved (at most ${LIMITS.ccMax}), each in their language; the same WhatsApp template as the approvers' signed copies. A number given twice is kept once (as first given), and one that is also an approver's of the document is dropped (the approver gets their own copy): the document shows cc as kept. A number never gets two copies. Replaced as a whole on update; [] removes them all. Multipart: one cc part holding the JSON array.`,
  });

const documentShape = {
  title: text('title').optional().meta({ description: 'Shorthand: used for both title_ar and title_en' }),
  title_ar: text('title_ar').optional(),
  title_en: text('title_en').optional(),
  department: Department.optional().meta({ description: 'Department key, e.g. hr, finance, legal' }),
  workflow_type: oneOf('workflow_type', WORKFLOW_TYPES).optional().meta({
    description:
      'Default sequential: approvers act position by position (order_index); approvers sharing a position are a signing group that acts in parallel. parallel: everyone is notified at send and acts in any order.',
  }),
  expires_in_days: integer('expires_in_days', LIMITS.expiresInDaysMin, LIMITS.expiresInDaysMax)
    .optional()
    .meta({ description: `Days until the approval deadline; default ${LIMITS.expiresInDaysDefault}` }),
  approvers: Approvers.optional(),
  reminders: Reminders.nullable().optional().meta({
    description:
      "Automatic reminders; absent or null: the account's default (none unless configured). Multipart: one reminders part holding the JSON object, or reminders[first_after_hours], reminders[every_hours] and reminders[max] parts",
  }),
  allow_delegation: boolean('allow_delegation').optional().meta({
    description:
      'Default false. true: an approver whose turn it is may hand their step to someone else from the approval page (name, WhatsApp number, reason); the delegate takes the same place in the order with the same action and verification, and is notified over WhatsApp (unless the approver has notify: false). Multipart: "true" or "false".',
  }),
  cc: Cc.optional(),
};

/**
 * Positions (product rules §2, §4): an approver without one takes its place in the list (1-based). Approvers that
 * name the same `order_index` form a signing group; an approver whose position comes from its place in the list
 * never joins a group by accident: its position taken by another approver is refused.
 */
function resolveOrder(approvers: readonly ApproverInput[], ctx: z.RefinementCtx): void {
  approvers.forEach((a, i) => {
    if (a.orderIndex !== undefined) return;
    const order = i + 1; // no other approver without order_index has this place
    const other = approvers.findIndex((b) => b.orderIndex === order);
    if (other !== -1) {
      ctx.addIssue({
        code: 'custom',
        path: ['approvers', i, 'order_index'],
        message: `order_index ${order} (this approver's place in the list) is taken by approvers.${other}; give order_index explicitly: the same to sign as a group, another for a position of its own`,
      });
    }
  });
}

/** The parts of POST /documents besides the file (multipart `approvers[N][field]` parts become the array). */
export const CreateDocumentShape = z.object(documentShape);

export const CreateDocumentSchema = CreateDocumentShape.superRefine(
  (v, ctx) => requireBilingual(v, ctx, 'title'),
  ALWAYS_ON_OBJECTS,
)
  .superRefine((v, ctx) => {
    if (v.approvers) resolveOrder(v.approvers, ctx);
  })
  .transform((v): DocumentInput => ({
    titleAr: (v.title_ar ?? v.title)!,
    titleEn: (v.title_en ?? v.title)!,
    department: v.department ?? null,
    workflowType: v.workflow_type ?? 'sequential',
    expiresInDays: v.expires_in_days ?? LIMITS.expiresInDaysDefault,
    approvers: (v.approvers ?? []).map((a, i) => ({ ...a, orderIndex: a.orderIndex ?? i + 1 })),
    reminders: v.reminders ?? null,
    allowDelegation: v.allow_delegation ?? false,
    cc: v.cc ?? [],
  }));

/** Multipart part names travel in a header: no control characters. */
const PART_NAME = { pattern: '^[^\\u0000-\\u001f\\u007f]*$' };
const APPROVER_PARTS =
  'approvers is one part holding the JSON array (Content-Type application/json); approvers[N][field] parts (N from 0, no gaps, e.g. approvers[0][name], approvers[0][phone]) are the equivalent for plain HTML forms and curl -F. cc likewise: one JSON part, or cc[N][field] parts.';

/**
 * The form fields as the OpenAPI document states them: a part left empty counts as not given (HTML forms send
 * every input), so each field also admits "".
 */
const formFields = Object.fromEntries(
  Object.entries(documentShape).map(([name, field]) => [name, z.union([z.literal(''), field]).optional()]),
);
const nonEmpty = (...names: string[]) => ({
  required: names,
  properties: Object.fromEntries(names.map((n) => [n, { minLength: 1 }])),
});

/** For the OpenAPI document: the multipart body is the fields plus the file. */
export const CreateDocumentMultipart = z
  .object(formFields)
  .extend({
    file: z.any().meta({
      type: 'string',
      format: 'binary',
      description:
        'The PDF (part Content-Type application/pdf): not encrypted, at most 500 pages, at most the plan size limit (20 MB by default)',
    }),
  })
  .meta({
    required: ['file'],
    anyOf: [nonEmpty('title'), nonEmpty('title_ar', 'title_en')],
    propertyNames: PART_NAME,
    description: `multipart/form-data, each field once. ${APPROVER_PARTS} Give title, or both title_ar and title_en; likewise name, or name_ar and name_en.`,
  });

/** PUT /documents/{id}: JSON, or multipart with a new `file`. Only given fields change. */
export const UpdateDocumentShape = z.object(documentShape);

export const UpdateDocumentSchema = UpdateDocumentShape.superRefine((v, ctx) => {
  if (v.approvers) resolveOrder(v.approvers, ctx);
}).transform((v): DocumentUpdate => {
  const update: DocumentUpdate = {};
  if (v.title_ar !== undefined || v.title !== undefined) update.titleAr = (v.title_ar ?? v.title)!;
  if (v.title_en !== undefined || v.title !== undefined) update.titleEn = (v.title_en ?? v.title)!;
  if (v.department !== undefined) update.department = v.department;
  if (v.workflow_type !== undefined) update.workflowType = v.workflow_type;
  if (v.expires_in_days !== undefined) update.expiresInDays = v.expires_in_days;
  if (v.reminders !== undefined) update.reminders = v.reminders;
  if (v.allow_delegation !== undefined) update.allowDelegation = v.allow_delegation;
  if (v.cc !== undefined) update.cc = v.cc;
  if (v.approvers !== undefined)
    update.approvers = v.approvers.map((a, i) => ({ ...a, orderIndex: a.orderIndex ?? i + 1 }));
  return update;
});

export const UpdateDocumentMultipart = z
  .object(formFields)
  .extend({
    file: z.any().optional().meta({
      type: 'string',
      format: 'binary',
      description: 'A replacement PDF (optional), checked as on creation',
    }),
  })
  .meta({
    propertyNames: PART_NAME,
    description: `multipart/form-data, each field once; only the given fields change. ${APPROVER_PARTS}`,
  });

export const ListDocumentsQuery = z.object({
  status: oneOf('status', DOCUMENT_STATUSES).optional(),
  page: integer('page', 1, 1_000_000).optional().meta({ description: 'Page number, from 1; default 1' }),
  per_page: integer('per_page', 1, LIMITS.perPageMax)
    .optional()
    .meta({ description: `Items per page; default ${LIMITS.perPageDefault}, at most ${LIMITS.perPageMax}` }),
});

/** Null unless the final PDF failed for good (then `failed` until an operator's retry succeeds). */
export const Finalization = z
  .strictObject({
    state: z.enum(['failed', 'succeeded']).meta({
      description:
        'failed: every approver completed but the signed PDF could not be produced; the document stays in_progress (voidable) until an operator retries (documents:retry-finalization). succeeded: a retry produced it.',
    }),
    error: z.string().nullable().meta({ description: 'Why it failed, while failed; null once succeeded' }),
    failed_at: Timestamp.nullable().meta({ description: 'When finalization last failed for good' }),
  })
  .nullable()
  .meta({ id: 'Finalization' });

/** What signed the final PDF: on the document, its download and `document.approved`. */
export const Signature = z
  .strictObject({
    level: z.string().meta({
      description:
        'PAdES baseline level of the file (ETSI EN 319 142-1): B-B, B-T (with a signature time-stamp), B-LT (with validation data), B-LTA (with an archive time-stamp)',
      example: 'B-T',
    }),
    signed_at: Timestamp.meta({ description: 'The signing time written in the signature' }),
    certificate: z
      .strictObject({
        subject: z.string().meta({ example: 'CN=Example Co document signing, O=Example Co' }),
        issuer: z.string(),
        serial: z
          .string()
          .regex(/^[0-9A-F]+$/)
          .meta({ description: 'Serial number, hexadecimal' }),
        not_after: Timestamp.meta({ description: 'When the signing certificate expires' }),
      })
      .meta({ description: 'The signing certificate' }),
    timestamp_authority: z.string().nullable().meta({
      description:
        "Subject of the time-stamp authority's certificate; null when the signature has no time-stamp",
    }),
  })
  .nullable()
  .meta({
    id: 'Signature',
    description: 'What signed the final PDF; null until the document is approved',
  });

export const DocumentResource = z
  .strictObject({
    id: z.uuid(),
    reference: z
      .string()
      .regex(/^WQT-\d{4}-\d{6,}$/)
      .meta({ example: 'WQT-2026-000042' }),
    title_ar: z.string(),
    title_en: z.string(),
    department: z.string().nullable(),
    workflow_type: z.enum(WORKFLOW_TYPES),
    status: z.enum(DOCUMENT_STATUSES),
    expires_at: Timestamp.meta({ description: 'Approval deadline' }),
    page_count: z.int().min(1),
    file: z.strictObject({
      name: z.string().nullable(),
      size: z.int().min(0),
      sha256: z.string().regex(/^[0-9a-f]{64}$/),
    }),
    rejection_reason: z.string().nullable(),
    sent_at: Timestamp.nullable(),
    completed_at: Timestamp.nullable(),
    finalization: Finalization,
    verification_url: z.url().optional().meta({
      description:
        'Approved documents signed with a verification page: the public verification page {PUBLIC_BASE_URL}/v/{token} that the audit certificate prints with its QR code (no authentication; shows the approvals and checks whether a PDF is the signed file)',
    }),
    signature: Signature,
    reminders: Reminders.nullable().meta({
      description: "The document's automatic reminders; null: the account's default applies when it is sent",
    }),
    allow_delegation: z.boolean().meta({
      description: 'Approvers may hand their step to someone else from the approval page',
    }),
    cc: z
      .array(
        z
          .strictObject({
            phone: z
              .string()
              .regex(/^[1-9]\d{6,14}$/)
              .meta({ description: 'E.164 digits without +' }),
            language: z
              .enum(LANGUAGES)
              .nullable()
              .meta({ description: 'null: automatic (Arabic for Saudi numbers)' }),
            name: z.string().nullable(),
          })
          .meta({ id: 'CcRecipient' }),
      )
      .meta({ description: 'Who else receives the signed copy over WhatsApp once the document is approved' }),
    template: z
      .strictObject({ id: z.uuid(), version: z.int().min(1) })
      .nullable()
      .meta({
        description:
          'The template version the document was made from (POST /templates/{id}/documents or a bulk send); null for a document made by hand',
      }),
    created_at: Timestamp,
    updated_at: Timestamp,
    approvers: z.array(ApproverResource).meta({ description: 'Ordered by order_index' }),
  })
  .meta({ id: 'Document' });

export const DeletedResource = z
  .strictObject({ id: z.uuid(), deleted: z.literal(true) })
  .meta({ id: 'Deleted' });

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
export const documentResourceMatchesSerializer: Same<
  z.output<typeof DocumentResource>,
  SerializedDocument
> = true;
