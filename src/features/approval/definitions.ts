import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type {
  ActionEvidence,
  ActionKind,
  ActionType,
  ApproverStatus,
  NoticeKind,
  WorkflowType,
} from '../../domain/model.ts';
import type { ApprovalStatus } from './rules.ts';

/**
 * The approval workflow's contract, shared by the workflow, its activities and the client: its input, its updates
 * and its query, the refusals, and the activities it calls. Approver actions, void and remind are updates because
 * the caller must learn the outcome; a refused update (validator) never enters the history.
 *
 * The names here (update, query and activity names, and their inputs) are the same for the legacy workflow
 * (workflow/legacy/), so one client talks to runs of either type and one set of activities serves both.
 */
export const DOCUMENT_APPROVAL_WORKFLOW_TYPE = 'documentApproval';
/** The type of the runs started before worker versioning (workflow/legacy/); none is started any more. */
export const LEGACY_APPROVAL_WORKFLOW_TYPE = 'approvalWorkflow';
export const approvalWorkflowId = (documentId: string): string => `document-${documentId}`;

/** An approver as the workflow knows them: fixed when the document is sent. */
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
  /** ISO 8601: the durable deadline; the document expires when it passes unfinished. */
  expiresAt: string;
  approvers: ApproverSnapshot[];
  /** Automatic reminders: absent for none. Numbers only: no personal data in the history. */
  reminders?: WorkflowReminders;
  /** The document's `allow_delegation`: absent for false. */
  allowDelegation?: boolean;
}

/** Automatic reminders as the workflow runs them (see reminder-schedule.ts); durations in milliseconds. */
export interface WorkflowReminders {
  /** From an approver's notification to their first automatic reminder. */
  firstAfterMs: number;
  /** Between automatic reminders after the first. */
  everyMs: number;
  /** Automatic reminders per approver (each also counts against REMIND_MAX_PER_APPROVER). */
  max: number;
  /** How long before the deadline the one "expires tomorrow" reminder goes (24 hours, scaled in tests). */
  expiryNoticeMs: number;
}

export type { ActionEvidence, ActionKind } from '../../domain/model.ts';

/**
 * An approver's action as the workflow is asked to take it. Its evidence is stored in PostgreSQL first
 * (`approver_action_evidence`, see actionEvidenceStore) and only the row's id travels here, so the workflow's
 * history holds no IP address, user agent, typed name or reason.
 */
export interface ActInput {
  approverId: string;
  kind: ActionKind;
  /** The id of the action's evidence row (approver_action_evidence.id). */
  evidenceId: string;
}

/**
 * A delegation as the workflow is asked to take it: ids only. The delegate's name
 * and phone, the reason and the evidence are in PostgreSQL (`approver_delegations`, row `delegationId`); the
 * delegate's approver row, created by recordDelegation, gets the id `delegateId`.
 */
export interface DelegateInput {
  approverId: string;
  delegateId: string;
  delegationId: string;
}

export interface ApprovalView {
  status: ApprovalStatus;
  /** True once every approver completed and the final PDF is being produced. */
  finalizing: boolean;
  completed: number;
  total: number;
  approvers: { id: string; orderIndex: number; state: ApproverStatus }[];
  /** Set while a finalization failed for good and waits for `retryFinalization` (or a void). */
  finalizationFailure?: FinalizationFailure | null;
  /** Set while a read-model write exhausted its retry policy and the workflow waits for `retryFinalization`. */
  attention?: Attention | null;
}

export interface FinalizationFailure {
  error: string;
  /** ISO 8601. */
  failedAt: string;
}

/** A read-model write (an activity) that exhausted its retry policy: the workflow waits for an operator. */
export interface Attention {
  activity: string;
  error: string;
  /** ISO 8601. */
  since: string;
}

/** The action update: how runs of earlier versions (and legacy runs) take an approver's action. */
export const actUpdate = defineUpdate<ApprovalView, [ActInput]>('act');

/**
 * An approver's action already decided and recorded by the API, in the transaction that locked the document
 * (act-in-database.ts): the run follows it. Ids only, like ActInput; the evidence id makes it idempotent.
 */
export interface RecordedAction {
  approverId: string;
  kind: ActionKind;
  evidenceId: string;
}
export const ACTION_RECORDED_SIGNAL = 'actionRecorded';
export const actionRecordedSignal = defineSignal<[RecordedAction]>(ACTION_RECORDED_SIGNAL);
/**
 * How a run takes approvers' actions, written by its first activity: `signal` for runs that follow actions the
 * API recorded (actionRecordedSignal). Runs of earlier versions send nothing and take the act update.
 */
export type ActionProtocol = 'signal';
export const delegateUpdate = defineUpdate<ApprovalView, [DelegateInput]>('delegate');
export const voidUpdate = defineUpdate<ApprovalView, [{ at: string }]>('void');
export const remindUpdate = defineUpdate<{ wamid: string | null }, [{ approverId: string }]>('remind');
export const approvalStatusQuery = defineQuery<ApprovalView>('status');
/**
 * The operator's retry (`npm run cli -- documents:retry-finalization`, or `temporal workflow update execute --name
 * retryFinalization`): runs a failed finalization again, or the read-model write the workflow is parked on
 * (`attention`). Refused (`nothing_to_retry`) otherwise. Returns once the retry has been taken, not when it ends.
 */
export const retryFinalizationUpdate = defineUpdate<ApprovalView>('retryFinalization');

export type Refusal =
  | 'document_closed' // approved, rejected, expired, voided — or all approvers done and finalizing
  | 'unknown_approver'
  | 'already_acted'
  | 'not_your_turn'
  | 'delegation_pending' // the approver's own delegation of this step is not decided yet
  | 'not_notified'
  | 'nothing_to_retry'
  | 'delegation_not_allowed';

export const REFUSAL_MESSAGES: Record<Refusal, string> = {
  document_closed: 'The document no longer accepts actions',
  unknown_approver: 'This approver does not belong to the document',
  already_acted: 'This approver has already acted',
  not_your_turn: 'It is not this approver’s turn yet',
  delegation_pending:
    'This approver’s delegation of the step is still being taken; they can act once it is refused',
  not_notified: 'This approver has not been notified yet',
  nothing_to_retry:
    'Nothing to retry: the document’s finalization has not failed and the workflow is not waiting on a failed write',
  delegation_not_allowed: 'This document does not allow delegation',
};

// ---- Activities: the workflow imports these types only ----

/**
 * The notices the workflow sends per approver (approvers are not told of a rejection; signed copies go to approvers
 * and cc recipients alike and have their own activity input).
 */
export type WorkflowNoticeKind = Exclude<NoticeKind, 'rejected' | 'signed_copy'>;

export interface SignedCopiesInput {
  documentId: string;
  idempotencyPrefix: string;
}

export interface SignedCopiesResult {
  sent: number;
  failed: number;
}

/**
 * What `finalizeAndSendSignedCopies` did with the signed copies after finalizing:
 * `copies` when it sent them; otherwise `retryCopies` says whether the workflow should still send them with
 * `sendSignedCopies` on its own policy (a retryable failure) or not (refused for good; logged). Counts only.
 */
export interface FinalizeWithCopiesResult {
  copies: SignedCopiesResult | null;
  retryCopies: boolean;
}

export interface NotifyApproverInput {
  documentId: string;
  approverId: string;
  kind: WorkflowNoticeKind;
  /** The same key for every retry of one notification, so WhatsApp gets it once. */
  idempotencyKey: string;
}

export interface NotifyApproverResult {
  wamid: string | null;
  /** False when WhatsApp refused for good (a number not on WhatsApp, say); recorded on the approver. */
  sent: boolean;
  error?: string;
  /**
   * True when nothing was sent because the approver has `notify: false` (the account shows them the link itself).
   * Their turn has still come: they count as notified, so a sequential document goes on as usual.
   */
  skipped?: boolean;
}

export interface RecordActionInput {
  documentId: string;
  approverId: string;
  kind: ActionKind;
  /** The action's evidence row, read in the activity's transaction and marked accepted there. */
  evidenceId?: string;
  /** The evidence inline: only in actions of the oldest legacy runs, which carried it so. */
  evidence?: ActionEvidence;
}

/**
 * How long the workflow retries each kind of activity (schedule-to-close, in ms), from the worker's config
 * (APPROVAL_*_RETRY_SECONDS); read once per workflow through a local activity, so the values are in its history.
 */
export interface ApprovalPolicies {
  notifyMs: number;
  finalizeMs: number;
  writeMs: number;
  /**
   * The finalization's heartbeat time-out (APPROVAL_FINALIZE_HEARTBEAT_SECONDS). Absent from the histories of runs
   * whose worker predates it: those keep the 30 s they were started with.
   */
  finalizeHeartbeatMs?: number;
}

/**
 * `recordActionAndFinalize`: the action that completes the document, and the prefix of
 * the signed copies' idempotency keys.
 */
export interface FinalActionInput {
  /** The actions' document (also at the top, where a failure's redaction looks for it). */
  documentId: string;
  /**
   * The action that completes the document, last, after any other whose own write was still in flight when it was
   * accepted (written again here, idempotently, so the finalization reads them all).
   */
  actions: RecordActionInput[];
  idempotencyPrefix: string;
}

/**
 * The type of the failure `recordActionAndFinalize` fails with when the action's write (not the finalization)
 * failed, so that an operator reading the history tells the two apart. Either way the workflow then writes the
 * action on its own and finalizes as before.
 */
export const ACTION_NOT_WRITTEN = 'action_not_written';

/** One approval request of `notifyApprovers`: its result, or `failed` (the workflow retries it on its own). */
export type BatchedNoticeResult = { result: NotifyApproverResult } | { failed: true };

/** `recordActionAndNotify`: an action, and the approval requests it made due. */
export interface ActionNoticesInput {
  documentId: string;
  action: RecordActionInput;
  notices: NotifyApproverInput[];
}

/** `beginApproval`: the send to record, and the approval requests due at once. */
export interface BeginInput {
  documentId: string;
  workflowId: string;
  notices: NotifyApproverInput[];
  /** Absent from runs of earlier versions, which take actions as the act update. */
  protocol?: ActionProtocol;
}

/** `markDocumentSent`: the send to record, and how the run takes actions (absent: the act update). */
export interface MarkSentInput {
  documentId: string;
  workflowId: string;
  protocol?: ActionProtocol;
}

/** `closeDocument`: the run would void or expire the document. */
export interface CloseInput {
  documentId: string;
  to: 'voided' | 'expired';
  /** ISO 8601: when the void was asked (an expiry is dated by the database clock). */
  at?: string;
}

/**
 * What `closeDocument` found, under the document's row lock: `closed` when it wrote the move; otherwise the
 * document no longer accepted it (every approver completed, or one rejected). Either way `actions` are the
 * approvers' actions recorded so far, for the run to follow (it may not have heard of them yet).
 */
export interface CloseResult {
  closed: boolean;
  actions: RecordedAction[];
}

export interface BeginResult {
  policies: ApprovalPolicies;
  /** One per request asked, in order; empty when the run was ended instead of sent. */
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
  /** Why it was not sent: the reminder limit, the approver acted, the document closed, or WhatsApp refused. */
  skipped?: 'limit' | 'acted' | 'closed' | 'refused';
}

export interface RecordDelegationInput extends DelegateInput {
  documentId: string;
}

/** The activities the approval workflow calls. */
export interface ApprovalActivities {
  /** The worker's activity policies (a local activity). */
  approvalPolicies(): Promise<ApprovalPolicies>;
  /** A notification exhausted its retry policy: the approver reads `notification.status: "failed"`, remind retries. */
  recordNotificationFailure(input: NotificationFailureInput): Promise<void>;
  /** Finalization failed for good: `finalization.state = "failed"`, `document.finalization_failed`, an error log. */
  markFinalizationFailed(input: { documentId: string; error: string; failedAt: string }): Promise<void>;
  markDocumentSent(input: MarkSentInput): Promise<void>;
  /**
   * A local activity: markDocumentSent, the worker's activity policies, and
   * the first approval requests (as notifyApprovers; none when the run was ended instead) — one marker where
   * approvalPolicies, markDocumentSent and a request each were one.
   */
  beginApproval(input: BeginInput): Promise<BeginResult>;
  notifyApprover(input: NotifyApproverInput): Promise<NotifyApproverResult>;
  /**
   * A local activity: the approval requests due at one moment (a parallel
   * document's, a signing group's), each as notifyApprover, side by side. A request that fails is reported
   * (`failed`, nothing personal) and the others still go; the workflow retries a failed one with notifyApprover.
   */
  notifyApprovers(input: {
    documentId: string;
    notices: NotifyApproverInput[];
  }): Promise<BatchedNoticeResult[]>;
  recordApproverAction(input: RecordActionInput): Promise<void>;
  /**
   * A delegation the workflow took: the approver becomes `delegated`, the delegate's row is created from the
   * delegation's stored row, and `approver.delegated` is recorded, in one transaction; idempotent.
   */
  recordDelegation(input: RecordDelegationInput): Promise<void>;
  markDocumentVoided(input: { documentId: string; at: string }): Promise<void>;
  markDocumentExpired(input: { documentId: string }): Promise<void>;
  /**
   * A void or an expiry as a conditional write, under the document's row lock: written only while the document
   * accepts actions (a void also when its finalization failed); the actions recorded so far come back either way.
   */
  closeDocument(input: CloseInput): Promise<CloseResult>;
  /**
   * An automatic reminder: sent through notifyApprover as a `reminder`
   * when the approver is still notified, the document open and REMIND_MAX_PER_APPROVER not reached; skipped
   * otherwise (`sent: false` with the reason).
   */
  sendAutomaticReminder(input: NotifyApproverInput): Promise<AutomaticReminderResult>;
  /** Produces the signed final PDF and marks the document approved (the legacy workflow's first runs call it). */
  finalizeApprovedDocument(input: { documentId: string }): Promise<void>;
  /**
   * Sends the signed PDF to every approver as a WhatsApp `signed_copy` message, once per recipient (idempotency
   * keys `<idempotencyPrefix>:<approverId>:signed_copy`). A refusal for good is recorded on the outbox row and
   * counted; a retryable failure fails the attempt after the others were tried. Counts only: history holds no PII.
   */
  sendSignedCopies(input: SignedCopiesInput): Promise<SignedCopiesResult>;
  /**
   * One activity where two would follow each other — finalizeApprovedDocument,
   * then sendSignedCopies once. A finalization failure fails it as before; a signed-copies failure never does
   * (it is reported in the result, and the workflow retries the copies alone when it was retryable).
   */
  finalizeAndSendSignedCopies(input: SignedCopiesInput): Promise<FinalizeWithCopiesResult>;
  /**
   * One activity where two would follow each other — the writes of the actions
   * (recordApproverAction each, idempotent; the one that completes the document last), then
   * finalizeAndSendSignedCopies. When a write fails the attempt fails with type ACTION_NOT_WRITTEN; a finalization
   * failure fails it as before.
   */
  recordActionAndFinalize(input: FinalActionInput): Promise<FinalizeWithCopiesResult>;
  /**
   * One activity where two would follow each other — the write of an accepted
   * action (recordApproverAction, idempotent; a failure typed ACTION_NOT_WRITTEN), then the approval requests it
   * made due (a sequential document's next approver or group), as notifyApprovers.
   */
  recordActionAndNotify(input: ActionNoticesInput): Promise<BatchedNoticeResult[]>;
}
