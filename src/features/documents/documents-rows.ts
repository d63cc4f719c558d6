import type { CcRecipient, DocumentStatus, ReminderSettings, WorkflowType } from '../../domain/model.ts';
import type { SecretBox } from '../../auth/secret-box.ts';
import { allColumns } from '../../db/prepared.ts';
import { finalTokenContext, verificationTokenContext } from '../../db/sealed-columns.ts';
import { toApprover, type Approver, type ApproverRow } from './approvers-rows.ts';

/**
 * A document as the app sees it and as its row stores it: the mapping between them, the columns a patch may
 * change, and the SQL that reads a document with its approvers in one round trip. The documents store's queries
 * are in documents-store.ts.
 */

export interface Document {
  id: string;
  accountId: string;
  reference: string;
  titleAr: string;
  titleEn: string;
  department: string | null;
  workflowType: WorkflowType;
  status: DocumentStatus;
  expiresAt: Date;
  fileKey: string;
  fileName: string | null;
  fileSha256: string;
  fileSize: number;
  pageCount: number;
  finalFileKey: string | null;
  /** The signed file's token, sealed (`openFinalToken`); null until finalization reserves it. */
  finalTokenSealed: string | null;
  finalSha256: string | null;
  workflowId: string | null;
  rejectionReason: string | null;
  sentAt: Date | null;
  completedAt: Date | null;
  /** Set once a finalization failed for good (migration 009); null when it never failed. */
  finalizationState: FinalizationState | null;
  finalizationError: string | null;
  finalizationFailedAt: Date | null;
  /** The final PDF's signature, recorded with `finalSha256` (migration 013); null until then. */
  signature: DocumentSignature | null;
  /** The document's automatic reminders (migration 018); null: the account's default applies. */
  reminders: ReminderSettings | null;
  /** Approvers may delegate their step from the approval page (migration 022). */
  allowDelegation: boolean;
  /** Who else receives the signed copy (migration 024); [] for no one. */
  cc: CcRecipient[];
  /** The template version the document was made from (migration 040); null for a document made by hand. */
  template: { id: string; version: number } | null;
  createdAt: Date;
  updatedAt: Date;
}

/** What signed the final PDF, as the API shows it (`signature` of the document, its download and webhooks). */
export interface DocumentSignature {
  /** PAdES baseline level: B-B, B-T, B-LT or B-LTA. */
  level: string;
  /** ISO 8601: the signing time in the signature dictionary. */
  signed_at: string;
  certificate: { subject: string; issuer: string; serial: string; not_after: string };
  /** Subject of the time-stamp authority's certificate; null without a time-stamp. */
  timestamp_authority: string | null;
}

/** `failed`: the document waits for an operator's retry; `succeeded`: a retry produced the signed PDF. */
export type FinalizationState = 'failed' | 'succeeded';

export interface DocumentRow {
  id: string;
  account_id: string;
  reference: string;
  title_ar: string;
  title_en: string;
  department: string | null;
  workflow_type: WorkflowType;
  status: DocumentStatus;
  expires_at: Date;
  file_key: string;
  file_name: string | null;
  file_sha256: string;
  file_size: number | string;
  page_count: number;
  final_file_key: string | null;
  final_token_sha256: string | null;
  final_token_sealed: string | null;
  final_sha256: string | null;
  workflow_id: string | null;
  rejection_reason: string | null;
  sent_at: Date | null;
  completed_at: Date | null;
  finalization_state: FinalizationState | null;
  finalization_error: string | null;
  finalization_failed_at: Date | null;
  signature?: DocumentSignature | null;
  reminders?: ReminderSettings | null;
  allow_delegation?: boolean;
  cc?: CcRecipient[] | null;
  template_id?: string | null;
  template_version?: number | null;
  created_at: Date;
  updated_at: Date;
}

/** Every column `DocumentRow` holds, for statements that name them (a named statement never selects `*`). */
export const DOCUMENT_COLUMNS = allColumns<DocumentRow>()([
  'id',
  'account_id',
  'reference',
  'title_ar',
  'title_en',
  'department',
  'workflow_type',
  'status',
  'expires_at',
  'file_key',
  'file_name',
  'file_sha256',
  'file_size',
  'page_count',
  'final_file_key',
  'final_token_sha256',
  'final_token_sealed',
  'final_sha256',
  'workflow_id',
  'rejection_reason',
  'sent_at',
  'completed_at',
  'finalization_state',
  'finalization_error',
  'finalization_failed_at',
  'signature',
  'reminders',
  'allow_delegation',
  'cc',
  'template_id',
  'template_version',
  'created_at',
  'updated_at',
]);

export const toDocument = (r: DocumentRow): Document => ({
  id: r.id,
  accountId: r.account_id,
  reference: r.reference,
  titleAr: r.title_ar,
  titleEn: r.title_en,
  department: r.department,
  workflowType: r.workflow_type,
  status: r.status,
  expiresAt: r.expires_at,
  fileKey: r.file_key,
  fileName: r.file_name,
  fileSha256: r.file_sha256,
  fileSize: Number(r.file_size),
  pageCount: r.page_count,
  finalFileKey: r.final_file_key,
  finalTokenSealed: r.final_token_sealed,
  finalSha256: r.final_sha256,
  workflowId: r.workflow_id,
  rejectionReason: r.rejection_reason,
  sentAt: r.sent_at,
  completedAt: r.completed_at,
  finalizationState: r.finalization_state ?? null,
  finalizationError: r.finalization_error ?? null,
  finalizationFailedAt: r.finalization_failed_at ?? null,
  signature: r.signature ?? null,
  reminders: r.reminders ?? null,
  allowDelegation: r.allow_delegation ?? false,
  cc: r.cc ?? [],
  template:
    r.template_id && r.template_version != null ? { id: r.template_id, version: r.template_version } : null,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

type ApproverJson = Omit<ApproverRow, 'created_at' | 'updated_at' | 'notified_at' | 'acted_at'> & {
  created_at: string;
  updated_at: string;
  notified_at: string | null;
  acted_at: string | null;
};

/** JSON carries timestamps as text; everything else arrives as the row mapper expects. */
const fromApproverJson = (j: ApproverJson): Approver =>
  toApprover({
    ...j,
    created_at: new Date(j.created_at),
    updated_at: new Date(j.updated_at),
    notified_at: j.notified_at === null ? null : new Date(j.notified_at),
    acted_at: j.acted_at === null ? null : new Date(j.acted_at),
  });

/** A document row with its approvers (JSON, in order) and its sealed verification token (migration 030), if any. */
const WITH_APPROVERS = `${DOCUMENT_COLUMNS.map((c) => `d.${c}`).join(', ')},
  coalesce((SELECT json_agg(a ORDER BY a.order_index, a.created_at, a.id) FROM approvers a WHERE a.document_id = d.id),
    '[]') AS approvers_json,
  (SELECT v.token_sealed FROM document_verifications v WHERE v.document_id = d.id) AS verification_sealed`;

export const BY_ID = `SELECT ${WITH_APPROVERS} FROM documents d WHERE d.id = $1 AND d.account_id = $2`;
/** The page joined to the total, so an empty page still brings its total (one row, its document columns null). */
const page = (statusFilter: string, limit: string, offset: string) => `
  SELECT c.total, p.* FROM
    (SELECT coalesce(sum(n), 0)::bigint AS total FROM document_counts WHERE account_id = $1${statusFilter}) c
    LEFT JOIN LATERAL (
      SELECT ${WITH_APPROVERS} FROM documents d WHERE d.account_id = $1${statusFilter.replace('status', 'd.status')}
      ORDER BY d.created_at DESC, d.id DESC LIMIT ${limit} OFFSET ${offset}) p ON true`;
export const PAGE = page('', '$2', '$3');
export const PAGE_BY_STATUS = page(' AND status = $2', '$3', '$4');

export type WithApproversRow = DocumentRow & {
  approvers_json: ApproverJson[];
  verification_sealed: string | null;
};
export type ListRow = (WithApproversRow | { [K in keyof WithApproversRow]: null }) & {
  total: number | string;
};

export function fromWithApproversRow(row: WithApproversRow): {
  document: Document;
  approvers: Approver[];
  verificationSealed: string | null;
} {
  const { approvers_json: approvers, verification_sealed: verificationSealed, ...document } = row;
  return { document: toDocument(document), approvers: approvers.map(fromApproverJson), verificationSealed };
}

/** The verification page's token of a document, opened from the copy `findWithApprovers` or `list` read. */
export function openVerificationToken(documentId: string, sealed: string, secrets: SecretBox): string {
  return secrets.open(sealed, verificationTokenContext(documentId));
}

/** The signed file's token, opened from its sealed copy; undefined before finalization reserved one. */
export function openFinalToken(doc: Document, secrets: SecretBox): string | undefined {
  return doc.finalTokenSealed === null
    ? undefined
    : secrets.open(doc.finalTokenSealed, finalTokenContext(doc.id));
}

/** 32 random bytes: 43 base64url characters. */
export const FINAL_TOKEN_BYTES = 32;

/**
 * Everything but the identity and the bookkeeping columns can change; the file's token only through
 * `reserveFinalFile` and `rotateFinalToken`.
 */
export type DocumentPatch = Partial<
  Omit<
    Document,
    'id' | 'accountId' | 'reference' | 'template' | 'createdAt' | 'updatedAt' | 'finalTokenSealed'
  >
>;

const COLUMNS: Record<keyof DocumentPatch, keyof DocumentRow> = {
  titleAr: 'title_ar',
  titleEn: 'title_en',
  department: 'department',
  workflowType: 'workflow_type',
  status: 'status',
  expiresAt: 'expires_at',
  fileKey: 'file_key',
  fileName: 'file_name',
  fileSha256: 'file_sha256',
  fileSize: 'file_size',
  pageCount: 'page_count',
  finalFileKey: 'final_file_key',
  finalSha256: 'final_sha256',
  workflowId: 'workflow_id',
  rejectionReason: 'rejection_reason',
  sentAt: 'sent_at',
  completedAt: 'completed_at',
  finalizationState: 'finalization_state',
  finalizationError: 'finalization_error',
  finalizationFailedAt: 'finalization_failed_at',
  signature: 'signature',
  reminders: 'reminders',
  allowDelegation: 'allow_delegation',
  cc: 'cc',
};

export function toRowPatch(patch: DocumentPatch): Partial<DocumentRow> {
  const row: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    const column = COLUMNS[field as keyof DocumentPatch];
    if (!column) throw new Error(`documentsStore: unknown field ${field}`);
    row[column] = field === 'cc' ? JSON.stringify(value) : value;
  }
  return row;
}

export type NewDocument = Pick<
  Document,
  | 'id'
  | 'accountId'
  | 'reference'
  | 'titleAr'
  | 'titleEn'
  | 'department'
  | 'workflowType'
  | 'expiresAt'
  | 'fileKey'
  | 'fileName'
  | 'fileSha256'
  | 'fileSize'
  | 'pageCount'
> &
  Partial<Pick<Document, 'reminders' | 'allowDelegation' | 'cc' | 'template'>>;

/** `WQT-<year>-<6 digits>` (the sequence counts per account and calendar year). */
export function formatReference(year: number, sequence: number): string {
  return `WQT-${year}-${String(sequence).padStart(6, '0')}`;
}
