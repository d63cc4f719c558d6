import { z } from 'zod';
import { ACTION_TYPES, LANGUAGES, LIMITS, VERIFICATIONS, WORKFLOW_TYPES } from '../../domain/model.ts';
import { MAX_PDF_PAGES } from '../../pdf/limits.ts';
import { Phone } from '../documents/approvers-schemas.ts';
import { CreateDocumentShape, Reminders } from '../documents/documents-schemas.ts';
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
import { ROLE_KEY, reservedRoleKey, type Recipient, type Role } from './roles.ts';

/**
 * Request and response schemas of templates. Titles, settings and people's fields reuse the document's builders
 * (api/schemas/fields.ts), so a template accepts exactly the text a document does and refuses it the same way.
 */

export const RoleKey = z
  .string({ error: 'key must be a string' })
  .regex(ROLE_KEY, { error: 'key must be a lowercase letter, then up to 31 lowercase letters, digits or _' })
  .refine((k) => !reservedRoleKey(k), {
    error: 'key must not be a name every object has (such as constructor)',
  });

const PlacementInput = z
  .strictObject(
    {
      page: integer('placement.page', 1, MAX_PDF_PAGES),
      x: decimal('placement.x', 0, LIMITS.placementMax),
      y: decimal('placement.y', 0, LIMITS.placementMax),
      width: decimal('placement.width', 0, LIMITS.placementMax, { exclusiveMin: true }).nullable().optional(),
    },
    { error: 'placement must be an object {page, x, y, width}' },
  )
  .meta({
    description:
      'Where the mark goes on the original pages (PDF points, page 1-based); null: a signatures page',
  });

export const RoleInput = z
  .strictObject(
    {
      key: RoleKey,
      label_ar: text('label_ar'),
      label_en: text('label_en'),
      action_type: oneOf('action_type', ACTION_TYPES).optional().meta({ description: 'Default sign' }),
      order_index: integer('order_index', 1, LIMITS.orderMax).optional().meta({
        description:
          "Position in the signing order, as an approver's (roles sharing it form a signing group); default: the role's place in the list",
      }),
      placement: PlacementInput.nullable().optional(),
      verification: oneOf('verification', VERIFICATIONS).optional().meta({
        description:
          "none or whatsapp_otp; default: the account's default_verification when a document is made",
      }),
      notify: z
        .boolean({ error: 'notify must be true or false' })
        .optional()
        .meta({ description: 'Default true' }),
    },
    {
      error: (iss) =>
        iss.code === 'unrecognized_keys'
          ? `a role takes only key, label_ar, label_en, action_type, order_index, placement, verification and notify`
          : 'each role must be an object',
    },
  )
  .meta({ id: 'RoleInput' });

type RoleValue = z.output<typeof RoleInput>;

/** Roles given as the JSON value, or (multipart) as one part holding it. */
const Roles = z.preprocess(
  (v) => {
    if (typeof v !== 'string') return v;
    try {
      return JSON.parse(v) as unknown;
    } catch {
      return v; // refused below as not a list
    }
  },
  z
    .array(RoleInput, { error: 'roles must be a JSON list of roles' })
    .min(1, { error: 'a template needs at least one role' })
    .max(LIMITS.approversMax, { error: `a template has at most ${LIMITS.approversMax} roles` })
    .superRefine(checkRoles)
    .transform((roles) => roles.map(toRole)),
);

function checkRoles(roles: RoleValue[], ctx: z.RefinementCtx): void {
  const seen = new Map<string, number>();
  roles.forEach((r, i) => {
    const first = seen.get(r.key);
    if (first !== undefined)
      ctx.addIssue({ code: 'custom', path: [i, 'key'], message: `key ${r.key} is also roles.${first}.key` });
    else seen.set(r.key, i);
    if (r.order_index !== undefined) return;
    const other = roles.findIndex((o) => o.order_index === i + 1);
    if (other !== -1)
      ctx.addIssue({
        code: 'custom',
        path: [i, 'order_index'],
        message: `order_index ${i + 1} (this role's place in the list) is taken by roles.${other}; give order_index explicitly`,
      });
  });
}

function toRole(r: RoleValue, i: number): Role {
  return {
    key: r.key,
    labelAr: r.label_ar,
    labelEn: r.label_en,
    actionType: r.action_type ?? 'sign',
    orderIndex: r.order_index ?? i + 1,
    placement: r.placement ? { ...r.placement, width: r.placement.width ?? null } : null,
    ...(r.verification !== undefined && { verification: r.verification }),
    notify: r.notify ?? true,
  };
}

/** The document settings a template carries (as POST /documents takes them), and its roles instead of approvers. */
const { approvers: _approvers, ...documentFields } = CreateDocumentShape.shape;
void _approvers;
const templateShape = { ...documentFields, roles: Roles.optional() };

export const CreateTemplateShape = z.object(templateShape);

export interface TemplateFields {
  titleAr: string;
  titleEn: string;
  department: string | null;
  workflowType: (typeof WORKFLOW_TYPES)[number];
  expiresInDays: number;
  reminders: z.output<typeof Reminders> | null;
  allowDelegation: boolean;
  cc: { phone: string; language: (typeof LANGUAGES)[number] | null; name: string | null }[];
  roles: Role[];
}

export const CreateTemplateSchema = CreateTemplateShape.superRefine(
  (v, ctx) => requireBilingual(v, ctx, 'title'),
  ALWAYS_ON_OBJECTS,
)
  .superRefine((v, ctx) => {
    if (v.roles === undefined)
      ctx.addIssue({ code: 'custom', path: ['roles'], message: 'roles is required' });
  })
  .transform((v): TemplateFields => ({
    titleAr: (v.title_ar ?? v.title)!,
    titleEn: (v.title_en ?? v.title)!,
    department: v.department ?? null,
    workflowType: v.workflow_type ?? 'sequential',
    expiresInDays: v.expires_in_days ?? LIMITS.expiresInDaysDefault,
    reminders: v.reminders ?? null,
    allowDelegation: v.allow_delegation ?? false,
    cc: v.cc ?? [],
    roles: v.roles ?? [],
  }));

/** PUT /templates/{id}: what is given replaces the current version's value in the new version. */
export const UpdateTemplateShape = z.object(templateShape);
export type TemplateUpdate = Partial<TemplateFields>;

export const UpdateTemplateSchema = UpdateTemplateShape.transform((v): TemplateUpdate => {
  const update: TemplateUpdate = {};
  if (v.title_ar !== undefined || v.title !== undefined) update.titleAr = (v.title_ar ?? v.title)!;
  if (v.title_en !== undefined || v.title !== undefined) update.titleEn = (v.title_en ?? v.title)!;
  if (v.department !== undefined) update.department = v.department;
  if (v.workflow_type !== undefined) update.workflowType = v.workflow_type;
  if (v.expires_in_days !== undefined) update.expiresInDays = v.expires_in_days;
  if (v.reminders !== undefined) update.reminders = v.reminders;
  if (v.allow_delegation !== undefined) update.allowDelegation = v.allow_delegation;
  if (v.cc !== undefined) update.cc = v.cc;
  if (v.roles !== undefined) update.roles = v.roles;
  return update;
});

/** One person filling a role: the approver's own fields (name or name_ar + name_en, phone, roles, language). */
export const RecipientInput = z
  .strictObject(
    {
      name: text('name').optional().meta({ description: 'Shorthand: used for both name_ar and name_en' }),
      name_ar: text('name_ar').optional(),
      name_en: text('name_en').optional(),
      phone: Phone,
      role_ar: clearableText('role_ar').optional(),
      role_en: clearableText('role_en').optional(),
      language: oneOf('language', LANGUAGES).nullable().optional(),
    },
    {
      error: (iss) =>
        iss.code === 'unrecognized_keys'
          ? 'a recipient takes only name, name_ar, name_en, phone, role_ar, role_en and language'
          : 'each recipient must be an object {name, phone, …}',
    },
  )
  .meta({
    id: 'Recipient',
    required: ['phone'],
    anyOf: [{ required: ['name'] }, { required: ['name_ar', 'name_en'] }],
  })
  .superRefine((v, ctx) => requireBilingual(v, ctx, 'name'), ALWAYS_ON_OBJECTS)
  .transform((v): Recipient => ({
    nameAr: (v.name_ar ?? v.name)!,
    nameEn: (v.name_en ?? v.name)!,
    phone: v.phone,
    roleAr: v.role_ar ?? null,
    roleEn: v.role_en ?? null,
    language: v.language ?? null,
  }));

export const TitleOverride = {
  title: text('title')
    .optional()
    .meta({ description: "Both titles of the document; default the template's" }),
  title_ar: text('title_ar').optional(),
  title_en: text('title_en').optional(),
};

/** POST /templates/{id}/documents. `recipients` is checked against the template's roles by the service. */
export const DocumentFromTemplateShape = z.strictObject({
  ...TitleOverride,
  recipients: z
    .record(z.string(), z.unknown(), { error: 'recipients must be an object {<role key>: {name, phone, …}}' })
    .meta({
      description:
        'One recipient per role of the template, keyed by role key: {name | name_ar + name_en, phone, role_ar, role_en, language}',
      additionalProperties: { $ref: '#/components/schemas/Recipient' },
    }),
  cc: documentFields.cc,
  send: boolean('send').optional().meta({ description: 'true: send it at once (default false: a draft)' }),
});

const RoleResource = z
  .strictObject({
    key: z.string(),
    label_ar: z.string(),
    label_en: z.string(),
    action_type: z.enum(ACTION_TYPES),
    order_index: z.int(),
    placement: z
      .strictObject({ page: z.int(), x: z.number(), y: z.number(), width: z.number().nullable() })
      .nullable(),
    verification: z.enum(VERIFICATIONS).nullable().meta({ description: "null: the account's default" }),
    notify: z.boolean(),
  })
  .meta({ id: 'Role' });

export const TemplateResource = z
  .strictObject({
    id: z.uuid(),
    version: z.int().min(1).meta({ description: 'The current version: every update makes a new one' }),
    title_ar: z.string(),
    title_en: z.string(),
    department: z.string().nullable(),
    workflow_type: z.enum(WORKFLOW_TYPES),
    expires_in_days: z.int(),
    reminders: Reminders.nullable(),
    allow_delegation: z.boolean(),
    cc: z.array(
      z.strictObject({
        phone: z.string(),
        language: z.enum(LANGUAGES).nullable(),
        name: z.string().nullable(),
      }),
    ),
    roles: z.array(RoleResource),
    page_count: z.int().min(1),
    file: z.strictObject({ name: z.string().nullable(), size: z.int().min(0), sha256: z.string() }),
    archived_at: Timestamp.nullable(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'Template' });

export const ListTemplatesQuery = z.object({
  archived: boolean('archived')
    .optional()
    .meta({ description: 'true: the archived templates instead (default false)' }),
  page: integer('page', 1, 1_000_000).optional(),
  per_page: integer('per_page', 1, LIMITS.perPageMax).optional(),
});
