import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type {
  ActionEvidence,
  ActionKind,
  ActionType,
  ApproverStatus,
  NoticeKind,
  WorkflowType,
} from './model.ts';
import type { ApprovalStatus } from './rules.ts';

/**
 * The legacy workflow's contract as it stood when it was frozen: its input, updates, query, refusals and the
 * activities it calls. The names are recorded in its runs' histories; the worker's activities keep every name and
 * input shape below (src/activities checks it against this interface).
 */
export interface ApproverSnapshot {
  id: string;
  orderIndex: number;
  actionType: ActionType;
}

export interface ApprovalWorkflowInput {
  documentId: string;
  accountId: string;
  reference: string;
  workflowType: WorkflowType;
  expiresAt: string;
  approvers: ApproverSnapshot[];
  reminders?: WorkflowReminders;
  allowDelegation?: boolean;
}

export interface WorkflowReminders {
  firstAfterMs: number;
  everyMs: number;
  max: number;
  expiryNoticeMs: number;
}

export type { ActionKind } from './model.ts';

export interface ActInput {
  approverId: string;
  kind: ActionKind;
  evidenceId?: string;
  /** Only in runs whose actions carried their evidence inline. */
  evidence?: ActionEvidence;
}

export interface DelegateInput {
  approverId: string;
  delegateId: string;
  delegationId: string;
}

export interface ApprovalView {
  status: ApprovalStatus;
  finalizing: boolean;
  completed: number;
  total: number;
  approvers: { id: string; orderIndex: number; state: ApproverStatus }[];
  finalizationFailure?: FinalizationFailure | null;
  attention?: Attention | null;
}

export interface FinalizationFailure {
  error: string;
  failedAt: string;
}

export interface Attention {
  activity: string;
  error: string;
  since: string;
}

export const actUpdate = defineUpdate<ApprovalView, [ActInput]>('act');
export const delegateUpdate = defineUpdate<ApprovalView, [DelegateInput]>('delegate');
export const voidUpdate = defineUpdate<ApprovalView, [{ at: string }]>('void');
export const remindUpdate = defineUpdate<{ wamid: string | null }, [{ approverId: string }]>('remind');
export const sentUpdate = defineUpdate<ApprovalView>('sent');
export const approvalStatusQuery = defineQuery<ApprovalView>('status');
export const retryFinalizationUpdate = defineUpdate<ApprovalView>('retryFinalization');

export type Refusal =
  | 'document_closed'
  | 'unknown_approver'
  | 'already_acted'
  | 'not_your_turn'
  | 'not_notified'
  | 'nothing_to_retry'
  | 'delegation_not_allowed';

export const REFUSAL_MESSAGES: Record<Refusal, string> = {
  document_closed: 'The document no longer accepts actions',
  unknown_approver: 'This approver does not belong to the document',
  already_acted: 'This approver has already acted',
  not_your_turn: 'It is not this approver’s turn yet',
  not_notified: 'This approver has not been notified yet',
  nothing_to_retry:
    'Nothing to retry: the document’s finalization has not failed and the workflow is not waiting on a failed write',
  delegation_not_allowed: 'This document does not allow delegation',
};

export type WorkflowNoticeKind = Exclude<NoticeKind, 'rejected' | 'signed_copy'>;

export interface SignedCopiesInput {
  documentId: string;
  idempotencyPrefix: string;
}

export interface SignedCopiesResult {
  sent: number;
  failed: number;
}

export interface FinalizeWithCopiesResult {
  copies: SignedCopiesResult | null;
  retryCopies: boolean;
}

export interface NotifyApproverInput {
  documentId: string;
  approverId: string;
  kind: WorkflowNoticeKind;
  idempotencyKey: string;
}

export interface NotifyApproverResult {
  wamid: string | null;
  sent: boolean;
  error?: string;
  skipped?: boolean;
}

export interface RecordActionInput {
  documentId: string;
  approverId: string;
  kind: ActionKind;
  evidenceId?: string;
  evidence?: ActionEvidence;
}

export interface ApprovalPolicies {
  notifyMs: number;
  finalizeMs: number;
  writeMs: number;
}

export interface FinalActionInput {
  documentId: string;
  actions: RecordActionInput[];
  idempotencyPrefix: string;
}

export type BatchedNoticeResult = { result: NotifyApproverResult } | { failed: true };

export interface ActionNoticesInput {
  documentId: string;
  action: RecordActionInput;
  notices: NotifyApproverInput[];
}

export interface BeginInput {
  documentId: string;
  workflowId: string;
  notices: NotifyApproverInput[];
}

export interface BeginResult {
  policies: ApprovalPolicies;
  notices: BatchedNoticeResult[];
}

export interface NotificationFailureInput {
  documentId: string;
  approverId: string;
  kind: WorkflowNoticeKind;
  error: string;
}

export interface AutomaticReminderResult {
  sent: boolean;
  skipped?: 'limit' | 'acted' | 'closed' | 'refused';
}

export interface RecordDelegationInput extends DelegateInput {
  documentId: string;
}

/** The activities the legacy workflow calls, by name. */
export interface ApprovalActivities {
  approvalPolicies(): Promise<ApprovalPolicies>;
  recordNotificationFailure(input: NotificationFailureInput): Promise<void>;
  markFinalizationFailed(input: { documentId: string; error: string; failedAt: string }): Promise<void>;
  markDocumentSent(input: { documentId: string; workflowId: string }): Promise<void>;
  beginApproval(input: BeginInput): Promise<BeginResult>;
  notifyApprover(input: NotifyApproverInput): Promise<NotifyApproverResult>;
  notifyApprovers(input: {
    documentId: string;
    notices: NotifyApproverInput[];
  }): Promise<BatchedNoticeResult[]>;
  recordApproverAction(input: RecordActionInput): Promise<void>;
  recordDelegation(input: RecordDelegationInput): Promise<void>;
  markDocumentVoided(input: { documentId: string; at: string }): Promise<void>;
  markDocumentExpired(input: { documentId: string }): Promise<void>;
  sendAutomaticReminder(input: NotifyApproverInput): Promise<AutomaticReminderResult>;
  finalizeApprovedDocument(input: { documentId: string }): Promise<void>;
  sendSignedCopies(input: SignedCopiesInput): Promise<SignedCopiesResult>;
  finalizeAndSendSignedCopies(input: SignedCopiesInput): Promise<FinalizeWithCopiesResult>;
  recordActionAndFinalize(input: FinalActionInput): Promise<FinalizeWithCopiesResult>;
  recordActionAndNotify(input: ActionNoticesInput): Promise<BatchedNoticeResult[]>;
}
