import type { ActionKind } from './workflow/approval-state.ts';
import type { ActionEvidence } from './definitions.ts';

/** Inputs of the approval activities; the workflow imports only these types. */
export type NoticeKind = 'approval_request' | 'reminder' | 'voided';

export interface NotifyApproverInput {
  documentId: string;
  approverId: string;
  kind: NoticeKind;
  /** The same key for every retry of one notification, so WhatsApp gets it once. */
  idempotencyKey: string;
}

export interface NotifyApproverResult {
  wamid: string | null;
  /** False when WhatsApp refused for good (a number not on WhatsApp, say); recorded on the approver. */
  sent: boolean;
  error?: string;
}

export interface RecordActionInput {
  documentId: string;
  approverId: string;
  kind: ActionKind;
  evidence: ActionEvidence;
}

/** The activities the approval workflow calls. */
export interface ApprovalActivities {
  markDocumentSent(input: { documentId: string; workflowId: string }): Promise<void>;
  notifyApprover(input: NotifyApproverInput): Promise<NotifyApproverResult>;
  recordApproverAction(input: RecordActionInput): Promise<void>;
  markDocumentVoided(input: { documentId: string; at: string }): Promise<void>;
  markDocumentExpired(input: { documentId: string }): Promise<void>;
  /** Produces the signed final PDF and marks the document approved. */
  finalizeApprovedDocument(input: { documentId: string }): Promise<void>;
}
