import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { WorkflowType } from '../domain/model.ts';
import type {
  ActionKind,
  ApprovalStatus,
  ApproverSnapshot,
  ApproverState,
  Refusal,
} from './workflow/approval-state.ts';

/**
 * The approval workflow's contract, shared by the workflow and the API: its input, its updates and its query.
 * Approver actions, void and remind are updates because the caller must learn the outcome; a refused update
 * (validator) never enters the history.
 */
export const APPROVAL_WORKFLOW_TYPE = 'approvalWorkflow';
export const approvalWorkflowId = (documentId: string): string => `document-${documentId}`;

export interface ApprovalWorkflowInput {
  documentId: string;
  accountId: string;
  reference: string;
  workflowType: WorkflowType;
  /** ISO 8601: the durable deadline; the document expires when it passes unfinished. */
  expiresAt: string;
  approvers: ApproverSnapshot[];
}

/** What an approver did and how: kept for the audit certificate. */
export interface ActionEvidence {
  /** ISO 8601 time the service received the action. */
  at: string;
  channel: 'whatsapp' | 'page';
  ip?: string;
  userAgent?: string;
  /** WhatsApp message id of a button reply. */
  messageId?: string;
  /** Storage key of a drawn signature or an uploaded stamp image. */
  imageKey?: string;
  typedName?: string;
  generatedSeal?: boolean;
  reason?: string;
}

export interface ActInput {
  approverId: string;
  kind: ActionKind;
  evidence: ActionEvidence;
}

export interface ApprovalView {
  status: ApprovalStatus;
  /** True once every approver completed and the final PDF is being produced. */
  finalizing: boolean;
  completed: number;
  total: number;
  approvers: { id: string; orderIndex: number; state: ApproverState }[];
}

export const actUpdate = defineUpdate<ApprovalView, [ActInput]>('act');
export const voidUpdate = defineUpdate<ApprovalView, [{ at: string }]>('void');
export const remindUpdate = defineUpdate<{ wamid: string | null }, [{ approverId: string }]>('remind');
/** Completes once the document reads `pending` in PostgreSQL; sent with the start (update-with-start). */
export const sentUpdate = defineUpdate<ApprovalView>('sent');
export const approvalStatusQuery = defineQuery<ApprovalView>('status');

export type { Refusal };
export const REFUSAL_MESSAGES: Record<Refusal, string> = {
  document_closed: 'The document no longer accepts actions',
  unknown_approver: 'This approver does not belong to the document',
  already_acted: 'This approver has already acted',
  not_your_turn: 'It is not this approver’s turn yet',
  not_notified: 'This approver has not been notified yet',
};
