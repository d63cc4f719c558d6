import { z } from 'zod';
import type { ApproverInput, ApproverUpdate } from './inputs.ts';
import {
  ACTION_TYPES,
  APPROVER_STATUSES,
  LANGUAGES,
  LIMITS,
  VERIFICATIONS,
  type Placement,
} from '../../domain/model.ts';
import { normalizePhone, PHONE_MESSAGES } from './phone.ts';
import { MAX_PDF_PAGES } from '../../pdf/limits.ts';
import type { SerializedApprover } from './serialize.ts';
import { Timestamp } from '../../api/schemas/envelopes.ts';
import {
  ALWAYS_ON_OBJECTS,
  boolean,
  clearableText,
  decimal,
  integer,
  oneOf,
  requireBilingual,
  text,
} from '../../api/schemas/fields.ts';

export const Phone = z
  .preprocess(
    (v) => (typeof v === 'number' && Number.isSafeInteger(v) ? String(v) : v),
    z.string({
      error: (iss) => (iss.input === undefined ? PHONE_MESSAGES.required : PHONE_MESSAGES.notString),
    }),
  )
  .transform((value, ctx) => {
    const result = normalizePhone(value);
    if (result.ok) return result.phone;
    ctx.addIssue({ code: 'custom', message: result.message });
    return z.NEVER;
  })
  .meta({
    description:
      'WhatsApp number in international form: country code and number (7 to 15 digits), optionally after + or 00; spaces, dots, dashes and brackets between digits are ignored. It must be a valid number for its country code. Stored and returned as digits only.',
    // Not a JSON Schema format: it names the rule no pattern states (a number valid for its country code).
    format: 'phone',
    examples: ['966501234567', '+966501234567'],
  });

/**
 * The approver fields of docs/product-rules.md §2 and the optional placement of §6; shared by create and update.
 */
const approverShape = {
  name: text('name').optional().meta({ description: 'Shorthand: used for both name_ar and name_en' }),
  name_ar: text('name_ar').optional(),
  name_en: text('name_en').optional(),
  phone: Phone,
  role_ar: clearableText('role_ar').optional(),
  role_en: clearableText('role_en').optional(),
  action_type: oneOf('action_type', ACTION_TYPES).optional().meta({ description: 'Default sign' }),
  order_index: integer('order_index', 1, LIMITS.orderMax).optional().meta({
    description:
      "Position in the signing order, 1-based. Approvers with the same order_index form a signing group: in a sequential document the whole group is notified at once, its members act in any order, and the next position is notified when every member has completed; a rejection by any member rejects the document. A parallel document is one group whatever the positions. Default: on creation or a PUT of the approvers list, the approver's place in the list (an approver without order_index may not land on a position another approver names: 422); when adding one approver, the position after the last.",
  }),
  order: integer('order', 1, LIMITS.orderMax).optional().meta({ description: 'Alias of order_index' }),
  page: integer('page', 1, MAX_PDF_PAGES).nullable().optional().meta({
    description: 'Placement: page (1-based, at most the PDF page count); null removes the placement',
  }),
  x: decimal('x', 0, LIMITS.placementMax)
    .nullable()
    .optional()
    .meta({ description: 'Placement: left edge in PDF points' }),
  y: decimal('y', 0, LIMITS.placementMax)
    .nullable()
    .optional()
    .meta({ description: 'Placement: bottom edge in PDF points' }),
  width: decimal('width', 0, LIMITS.placementMax, { exclusiveMin: true })
    .nullable()
    .optional()
    .meta({ description: 'Placement: width in PDF points (optional)' }),
  language: oneOf('language', LANGUAGES)
    .nullable()
    .optional()
    .meta({ description: 'Language of messages and the approval page; default Arabic for Saudi numbers' }),
  verification: oneOf('verification', VERIFICATIONS).optional().meta({
    description:
      "How the approver proves they hold the WhatsApp number before acting on the approval page. none: holding the link is enough. whatsapp_otp: the page first asks for a 6-digit code sent to the number as a WhatsApp authentication message (valid 10 minutes, 5 attempts); a button reply in the WhatsApp chat itself counts as verified for approve_only and review_only. Default: the account's default_verification (none unless changed).",
  }),
  notify: boolean('notify').optional().meta({
    description:
      'Default true. false: Wathiq sends this approver no WhatsApp message (no request, reminder or notice); the account shows them the approval page itself (GET /approvers/{id}/link).',
  }),
};

type ApproverInputValue = {
  [K in keyof typeof approverShape]?: z.output<(typeof approverShape)[K]>;
};

function checkShared(v: ApproverInputValue, ctx: z.RefinementCtx): void {
  if (v.order_index !== undefined && v.order !== undefined) {
    ctx.addIssue({ code: 'custom', path: ['order'], message: 'give order_index or order, not both' });
  }
  // The placement is one group: a position needs its page and both coordinates.
  const placing = [v.page, v.x, v.y, v.width].some((p) => p !== undefined && p !== null);
  if (placing) {
    for (const field of ['page', 'x', 'y'] as const) {
      if (v[field] === undefined || v[field] === null) {
        ctx.addIssue({
          code: 'custom',
          path: [field],
          message: `${field} is required when a placement (page, x, y, width) is given`,
        });
      }
    }
  }
}

function placementOf(v: ApproverInputValue): Placement | null {
  return v.page != null && v.x != null && v.y != null
    ? { page: v.page, x: v.x, y: v.y, width: v.width ?? null }
    : null;
}

/**
 * The cross-field rules of checkShared, for the OpenAPI document: order and order_index are one field under two
 * names; there is no placement (page, x, y and width absent or null), or page, x and y are all given.
 */
const SHARED_RULES = {
  dependentSchemas: { order: { properties: { order_index: false } } },
  allOf: [
    {
      anyOf: [
        {
          properties: {
            page: { type: 'null' },
            x: { type: 'null' },
            y: { type: 'null' },
            width: { type: 'null' },
          },
        },
        {
          required: ['page', 'x', 'y'],
          properties: { page: { type: 'integer' }, x: { type: 'number' }, y: { type: 'number' } },
        },
      ],
    },
  ],
};

export const ApproverInputShape = z.object(approverShape).meta({
  required: ['phone'],
  anyOf: [{ required: ['name'] }, { required: ['name_ar', 'name_en'] }],
  ...SHARED_RULES,
});

export const ApproverInputSchema = ApproverInputShape.superRefine(
  (v, ctx) => requireBilingual(v, ctx, 'name'),
  ALWAYS_ON_OBJECTS,
)
  .superRefine(checkShared)
  .transform((v): ApproverInput => ({
    nameAr: (v.name_ar ?? v.name)!,
    nameEn: (v.name_en ?? v.name)!,
    phone: v.phone,
    roleAr: v.role_ar ?? null,
    roleEn: v.role_en ?? null,
    language: v.language ?? null,
    actionType: v.action_type ?? 'sign',
    orderIndex: v.order_index ?? v.order,
    placement: placementOf(v),
    ...(v.verification !== undefined && { verification: v.verification }),
    notify: v.notify ?? true,
  }));

/** PUT /approvers/{id}: every field optional; what is given replaces what was there. */
export const ApproverUpdateShape = z.object({ ...approverShape, phone: Phone.optional() }).meta(SHARED_RULES);

export const ApproverUpdateSchema = ApproverUpdateShape.superRefine((v, ctx) =>
  checkShared(v, ctx),
).transform((v): ApproverUpdate => {
  const update: ApproverUpdate = {};
  if (v.name_ar !== undefined || v.name !== undefined) update.nameAr = (v.name_ar ?? v.name)!;
  if (v.name_en !== undefined || v.name !== undefined) update.nameEn = (v.name_en ?? v.name)!;
  if (v.phone !== undefined) update.phone = v.phone;
  if (v.role_ar !== undefined) update.roleAr = v.role_ar;
  if (v.role_en !== undefined) update.roleEn = v.role_en;
  if (v.language !== undefined) update.language = v.language;
  if (v.action_type !== undefined) update.actionType = v.action_type;
  if (v.verification !== undefined) update.verification = v.verification;
  if (v.notify !== undefined) update.notify = v.notify;
  const order = v.order_index ?? v.order;
  if (order !== undefined) update.orderIndex = order;
  if (v.page === null) update.placement = null;
  else if (v.page !== undefined) update.placement = placementOf(v);
  return update;
});

export const ApproverResource = z
  .strictObject({
    id: z.uuid(),
    document_id: z.uuid(),
    name_ar: z.string(),
    name_en: z.string(),
    phone: z
      .string()
      .regex(/^[1-9]\d{6,14}$/)
      .meta({ description: 'E.164 digits without +' }),
    role_ar: z.string().nullable(),
    role_en: z.string().nullable(),
    language: z
      .enum(LANGUAGES)
      .nullable()
      .meta({ description: 'null: automatic (Arabic for Saudi numbers)' }),
    action_type: z.enum(ACTION_TYPES),
    order_index: z
      .int()
      .min(1)
      .max(LIMITS.orderMax)
      .meta({ description: 'Position in the signing order; approvers sharing it form a signing group' }),
    page: z.int().nullable(),
    x: z.number().nullable(),
    y: z.number().nullable(),
    width: z.number().nullable(),
    notify: z.boolean().meta({ description: 'false: no WhatsApp message is sent to this approver' }),
    status: z.enum(APPROVER_STATUSES),
    notified_at: Timestamp.nullable(),
    acted_at: Timestamp.nullable(),
    action_channel: z
      .string()
      .nullable()
      .meta({ description: 'whatsapp or page, once the approver has acted' }),
    rejection_reason: z.string().nullable(),
    verification: z.enum(VERIFICATIONS).meta({
      description: 'none, or whatsapp_otp: the approval page asks for a one-time code sent over WhatsApp',
    }),
    delegated_to_id: z.uuid().nullable().meta({
      description:
        'Status delegated: the approver of this document they handed their step to ("delegated to …"); acted_at is when',
    }),
    delegated_from_id: z.uuid().nullable().meta({
      description: 'A delegate: the approver who handed them their step (same order_index and action)',
    }),
    delegation_reason: z.string().nullable().meta({ description: 'Status delegated: the reason they gave' }),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'Approver' });

/** GET /approvers/{id}/link. */
export const ApproverLinkResource = z
  .strictObject({
    approver_id: z.uuid(),
    url: z.string().meta({ description: "The approver's approval page (PUBLIC_BASE_URL/a/<token>)" }),
    usable_now: z.boolean().meta({
      description: 'True when the approver can act on it now: their turn has come and the document is open',
    }),
    approver_status: z.enum(APPROVER_STATUSES),
    document_status: z.string(),
  })
  .meta({ id: 'ApproverLink' });

// The serializer and the documented schema must describe the same object.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
export const approverResourceMatchesSerializer: Same<
  z.output<typeof ApproverResource>,
  SerializedApprover
> = true;
