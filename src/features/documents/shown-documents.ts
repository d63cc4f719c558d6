import type { CcRecipient, DocumentStatus, ReminderSettings, WorkflowType } from '../../domain/model.ts';
import type { DocumentSignature, FinalizationState } from './documents-rows.ts';
import type { SerializedApprover, SerializedDocument } from './serialize.ts';

/**
 * `GET /documents/{id}`'s read, for the API's most frequent request: PostgreSQL selects only what the representation
 * shows, formats its times in the wire format (`isoTime`), and builds each approver as the representation's object,
 * keys in its order, in the order `serializeDocument` sorts them. The row then becomes the representation in one
 * step, with no domain objects, no `Date`s and no copies of the approvers between: what `serializeDocument` makes
 * of `findWithApprovers`, byte for byte, at a fraction of the allocation.
 */

/**
 * A time as `isoTime` writes it: UTC, whole seconds (truncated, as a `Date`'s seconds are), `+00:00`. Every time
 * shown here is set by the server's clock (now, or now plus at most a year), so its year has the four digits
 * `isoTime` writes for years 1000-9999.
 */
const wire = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"+00:00"')`;

/** The representation places an approver only when page, x and y are all set, as `toApprover` does. */
const placed = (column: string) =>
  `CASE WHEN a.placement_page IS NOT NULL AND a.placement_x IS NOT NULL AND a.placement_y IS NOT NULL
    THEN a.${column} END`;

/** `SerializedApprover`'s keys, in its order, and what each shows. */
const APPROVER_FIELDS: Record<keyof SerializedApprover, string> = {
  id: 'a.id',
  document_id: 'a.document_id',
  name_ar: 'a.name_ar',
  name_en: 'a.name_en',
  phone: 'a.phone',
  role_ar: 'a.role_ar',
  role_en: 'a.role_en',
  language: 'a.language',
  action_type: 'a.action_type',
  order_index: 'a.order_index',
  page: placed('placement_page'),
  x: placed('placement_x'),
  y: placed('placement_y'),
  width: placed('placement_width'),
  notify: 'a.notify',
  status: 'a.status',
  notified_at: wire('a.notified_at'),
  acted_at: wire('a.acted_at'),
  action_channel: 'a.action_channel',
  rejection_reason: 'a.rejection_reason',
  verification: 'a.verification',
  delegated_to_id: 'a.delegated_to_id',
  delegated_from_id: 'a.delegated_from_id',
  delegation_reason: 'a.delegation_reason',
  created_at: wire('a.created_at'),
  updated_at: wire('a.updated_at'),
};

const APPROVER_OBJECT = `json_build_object(${Object.entries(APPROVER_FIELDS)
  .map(([key, value]) => `'${key}', ${value}`)
  .join(', ')})`;

/**
 * The documents asked for, each on the row of its place in the arrays: $1 the ids and $2 their accounts, pair by
 * pair (uuid[] each). A pair with no such document of that account has no row.
 */
export const SHOWN_BY_IDS = `SELECT q.n, d.id, d.status, d.reference, d.title_ar, d.title_en, d.department,
  d.workflow_type, ${wire('d.expires_at')} AS expires_at, d.page_count, d.file_name, d.file_size, d.file_sha256,
  d.rejection_reason, ${wire('d.sent_at')} AS sent_at, ${wire('d.completed_at')} AS completed_at,
  d.finalization_state, d.finalization_error, ${wire('d.finalization_failed_at')} AS finalization_failed_at,
  d.signature, d.reminders, d.allow_delegation, d.cc, d.template_id, d.template_version,
  ${wire('d.created_at')} AS created_at, ${wire('d.updated_at')} AS updated_at,
  coalesce((SELECT json_agg(${APPROVER_OBJECT} ORDER BY a.order_index, a.created_at, a.id)
    FROM approvers a WHERE a.document_id = d.id), '[]') AS approvers,
  (SELECT v.token_sealed FROM document_verifications v WHERE v.document_id = d.id) AS verification_sealed
  FROM unnest($1::uuid[], $2::uuid[]) WITH ORDINALITY AS q(id, account_id, n)
  JOIN documents d ON d.id = q.id AND d.account_id = q.account_id`;

export interface ShownRow {
  /** The pair's place in the arrays, from 1. */
  n: number;
  id: string;
  status: DocumentStatus;
  reference: string;
  title_ar: string;
  title_en: string;
  department: string | null;
  workflow_type: WorkflowType;
  expires_at: string;
  page_count: number;
  file_name: string | null;
  file_size: number;
  file_sha256: string;
  rejection_reason: string | null;
  sent_at: string | null;
  completed_at: string | null;
  finalization_state: FinalizationState | null;
  finalization_error: string | null;
  finalization_failed_at: string | null;
  signature: DocumentSignature | null;
  reminders: ReminderSettings | null;
  allow_delegation: boolean;
  cc: CcRecipient[] | null;
  template_id: string | null;
  template_version: number | null;
  created_at: string;
  updated_at: string;
  approvers: SerializedApprover[];
  verification_sealed: string | null;
}

/** The representation of a shown document, as `serializeDocument` makes it (same keys, same order). */
export function representShown(r: ShownRow, verificationUrl: string | undefined): SerializedDocument {
  const approved = r.status === 'approved';
  return {
    id: r.id,
    reference: r.reference,
    title_ar: r.title_ar,
    title_en: r.title_en,
    department: r.department,
    workflow_type: r.workflow_type,
    status: r.status,
    expires_at: r.expires_at,
    page_count: r.page_count,
    file: { name: r.file_name, size: r.file_size, sha256: r.file_sha256 },
    rejection_reason: r.rejection_reason,
    sent_at: r.sent_at,
    completed_at: r.completed_at,
    finalization: r.finalization_state
      ? {
          state: r.finalization_state,
          error: r.finalization_state === 'failed' ? r.finalization_error : null,
          failed_at: r.finalization_failed_at,
        }
      : null,
    ...(verificationUrl && approved && { verification_url: verificationUrl }),
    signature: approved ? r.signature : null,
    reminders: r.reminders,
    allow_delegation: r.allow_delegation,
    cc: r.cc === null ? [] : r.cc.map((c) => ({ phone: c.phone, language: c.language, name: c.name })),
    template:
      r.template_id && r.template_version !== null
        ? { id: r.template_id, version: r.template_version }
        : null,
    created_at: r.created_at,
    updated_at: r.updated_at,
    approvers: r.approvers,
  };
}
