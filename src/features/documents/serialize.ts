import { isoTime } from '../../domain/time.ts';
import type { Approver } from './approvers-store.ts';
import type { Document, DocumentSignature } from './documents-store.ts';
import type {
  ActionType,
  ApproverStatus,
  DocumentStatus,
  Language,
  Verification,
  ReminderSettings,
  WorkflowType,
} from '../../domain/model.ts';

/**
 * The one public representation of documents and approvers: API responses and webhook payloads both use it.
 * Link tokens, storage keys, the final file's token and workflow internals never appear here.
 */
export interface SerializedApprover {
  id: string;
  document_id: string;
  name_ar: string;
  name_en: string;
  phone: string;
  role_ar: string | null;
  role_en: string | null;
  language: Language | null;
  action_type: ActionType;
  order_index: number;
  page: number | null;
  x: number | null;
  y: number | null;
  width: number | null;
  notify: boolean;
  status: ApproverStatus;
  notified_at: string | null;
  acted_at: string | null;
  action_channel: string | null;
  rejection_reason: string | null;
  verification: Verification;
  /** Status `delegated`: the approver (of this document) they handed their step to. */
  delegated_to_id: string | null;
  /** A delegate: the approver who handed them the step. */
  delegated_from_id: string | null;
  delegation_reason: string | null;
  created_at: string;
  updated_at: string;
}

export interface SerializedDocument {
  id: string;
  reference: string;
  title_ar: string;
  title_en: string;
  department: string | null;
  workflow_type: WorkflowType;
  status: DocumentStatus;
  expires_at: string;
  page_count: number;
  file: { name: string | null; size: number; sha256: string };
  rejection_reason: string | null;
  sent_at: string | null;
  completed_at: string | null;
  /** Null unless a finalization failed for good: then `failed` until an operator's retry succeeds. */
  finalization: SerializedFinalization | null;
  /** The public verification page printed on the certificate; only on approved documents that have one. */
  verification_url?: string;
  /** What signed the final PDF; null until the document is approved. */
  signature: DocumentSignature | null;
  reminders: ReminderSettings | null;
  allow_delegation: boolean;
  /** Who else receives the signed copy once the document is approved. */
  cc: SerializedCcRecipient[];
  /** The template version the document was made from; null for one made by hand. */
  template: { id: string; version: number } | null;
  created_at: string;
  updated_at: string;
  approvers: SerializedApprover[];
}

export interface SerializedCcRecipient {
  phone: string;
  language: Language | null;
  name: string | null;
}

export interface SerializedFinalization {
  state: 'failed' | 'succeeded';
  /** The last failure's message while `failed`; null once a retry succeeded. */
  error: string | null;
  /** When finalization last failed for good. */
  failed_at: string | null;
}

export function serializeFinalization(doc: Document): SerializedFinalization | null {
  if (!doc.finalizationState) return null;
  return {
    state: doc.finalizationState,
    error: doc.finalizationState === 'failed' ? doc.finalizationError : null,
    failed_at: isoTime(doc.finalizationFailedAt),
  };
}

export function serializeApprover(a: Approver): SerializedApprover {
  return {
    id: a.id,
    document_id: a.documentId,
    name_ar: a.nameAr,
    name_en: a.nameEn,
    phone: a.phone,
    role_ar: a.roleAr,
    role_en: a.roleEn,
    language: a.language,
    action_type: a.actionType,
    order_index: a.orderIndex,
    page: a.placement?.page ?? null,
    x: a.placement?.x ?? null,
    y: a.placement?.y ?? null,
    width: a.placement?.width ?? null,
    notify: a.notify,
    status: a.status,
    notified_at: isoTime(a.notifiedAt),
    acted_at: isoTime(a.actedAt),
    action_channel: a.actionChannel,
    rejection_reason: a.rejectionReason,
    verification: a.verification,
    delegated_to_id: a.delegatedToId,
    delegated_from_id: a.delegatedFromId,
    delegation_reason: a.delegationReason,
    created_at: isoTime(a.createdAt),
    updated_at: isoTime(a.updatedAt),
  };
}

/** `approvers` in any order; they come out by `order_index`. */
export function serializeDocument(
  doc: Document,
  approvers: readonly Approver[],
  extras: { verificationUrl?: string } = {},
): SerializedDocument {
  return {
    id: doc.id,
    reference: doc.reference,
    title_ar: doc.titleAr,
    title_en: doc.titleEn,
    department: doc.department,
    workflow_type: doc.workflowType,
    status: doc.status,
    expires_at: isoTime(doc.expiresAt),
    page_count: doc.pageCount,
    file: { name: doc.fileName, size: doc.fileSize, sha256: doc.fileSha256 },
    rejection_reason: doc.rejectionReason,
    sent_at: isoTime(doc.sentAt),
    completed_at: isoTime(doc.completedAt),
    finalization: serializeFinalization(doc),
    ...(extras.verificationUrl && doc.status === 'approved' && { verification_url: extras.verificationUrl }),
    signature: doc.status === 'approved' ? doc.signature : null,
    reminders: doc.reminders,
    allow_delegation: doc.allowDelegation,
    cc: doc.cc.map((c) => ({ phone: c.phone, language: c.language, name: c.name })),
    template: doc.template && { id: doc.template.id, version: doc.template.version },
    created_at: isoTime(doc.createdAt),
    updated_at: isoTime(doc.updatedAt),
    approvers: [...approvers]
      .sort((a, b) => a.orderIndex - b.orderIndex || a.createdAt.getTime() - b.createdAt.getTime())
      .map(serializeApprover),
  };
}
