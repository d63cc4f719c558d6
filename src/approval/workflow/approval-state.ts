import type { ApproverStatus, WorkflowType } from '../../domain/model.ts';
import type { ActionKind, ApproverSnapshot, FinalizationFailure, Refusal } from '../definitions.ts';
import * as rules from '../rules.ts';
import type { ApprovalStatus } from '../rules.ts';

/**
 * The approval as a plain reducer: every decision the workflow makes about approvers lives here, free of
 * Temporal, so unit tests call it directly and the workflow only drives it. The rules it shares with the rest of
 * the service (accepting actions, whose turn it is) are those of `../rules.ts`.
 */
export interface ApproverEntry extends ApproverSnapshot {
  state: ApproverStatus;
}

export interface ApprovalState {
  workflowType: WorkflowType;
  status: ApprovalStatus;
  approvers: readonly ApproverEntry[];
  /** Every approver completed but finalization failed for good; waits for a retry or a void. */
  finalizationFailure?: FinalizationFailure | null;
  /** Sequential one approver at a time even where approvers share an order_index (histories before groups). */
  oneAtATime?: boolean;
}

export function createApprovalState(
  workflowType: WorkflowType,
  approvers: readonly ApproverSnapshot[],
): ApprovalState {
  const ordered = approvers
    .map((a, i) => ({ a, i }))
    .sort((x, y) => x.a.orderIndex - y.a.orderIndex || x.i - y.i)
    .map(({ a }) => ({
      id: a.id,
      orderIndex: a.orderIndex,
      actionType: a.actionType,
      state: 'waiting' as const,
    }));
  return { workflowType, status: 'pending', approvers: ordered };
}

export const allCompleted = (s: ApprovalState): boolean => s.approvers.every((a) => a.state === 'completed');

/** Open for actions: sent, not finished, and not every approver done (then it is finalizing). */
export const acceptsActions = (s: ApprovalState): boolean =>
  rules.acceptsActions(
    s.status,
    s.approvers.map((a) => a.state),
  );

/**
 * Sequential: the signing group whose turn it is (the approvers not yet acted of the lowest order_index that still
 * has one). Parallel: everyone not yet acted.
 */
export const currentApprovers = (s: ApprovalState): ApproverEntry[] =>
  rules.currentApprovers(s.workflowType, s.status, s.approvers, (a) => a.state, {
    oneAtATime: s.oneAtATime === true,
  });

/** Approvers who must be notified now. */
export const dueForNotification = (s: ApprovalState): ApproverEntry[] =>
  currentApprovers(s).filter((a) => a.state === 'waiting');

export function markNotified(s: ApprovalState, ids: readonly string[]): ApprovalState {
  const set = new Set(ids);
  return {
    ...s,
    approvers: s.approvers.map((a) =>
      set.has(a.id) && a.state === 'waiting' ? { ...a, state: 'notified' } : a,
    ),
  };
}

export type ActionDecision =
  | { accepted: true; next: ApprovalState; firstCompletion: boolean; finished: boolean }
  | { accepted: false; refusal: Refusal };

/** One approver completes or rejects. Exactly one answer for every race: the state it is applied to decides. */
export function decideAction(s: ApprovalState, approverId: string, kind: ActionKind): ActionDecision {
  const approver = s.approvers.find((a) => a.id === approverId);
  if (!approver) return { accepted: false, refusal: 'unknown_approver' };
  if (rules.hasActed(approver.state)) return { accepted: false, refusal: 'already_acted' };
  if (!acceptsActions(s)) return { accepted: false, refusal: 'document_closed' };
  if (!currentApprovers(s).some((a) => a.id === approverId))
    return { accepted: false, refusal: 'not_your_turn' };

  const approvers = s.approvers.map((a) =>
    a.id === approverId
      ? { ...a, state: kind === 'complete' ? ('completed' as const) : ('rejected' as const) }
      : a,
  );
  if (kind === 'reject') {
    return {
      accepted: true,
      next: { ...s, approvers, status: 'rejected' },
      firstCompletion: false,
      finished: true,
    };
  }
  const firstCompletion = !s.approvers.some((a) => a.state === 'completed');
  const next: ApprovalState = { ...s, approvers, status: 'in_progress' };
  return { accepted: true, next, firstCompletion, finished: allCompleted(next) };
}

/** Finalization failed for good: the document stays `in_progress`, open to a retry or a void. */
export const finalizationFailed = (s: ApprovalState): boolean =>
  s.status === 'in_progress' && allCompleted(s) && !!s.finalizationFailure;

/** Open for actions, or its finalization failed: the account can still void it. */
export function decideVoid(
  s: ApprovalState,
): { accepted: true; next: ApprovalState } | { accepted: false; refusal: Refusal } {
  if (!acceptsActions(s) && !finalizationFailed(s)) return { accepted: false, refusal: 'document_closed' };
  return { accepted: true, next: { ...s, status: 'voided', finalizationFailure: null } };
}

/** Finalization failed for good (`failure`); only a document being finalized can fail it. */
export function markFinalizationFailed(s: ApprovalState, failure: FinalizationFailure): ApprovalState {
  return s.status === 'in_progress' && allCompleted(s) ? { ...s, finalizationFailure: failure } : s;
}

/** The operator's retry of a failed finalization: refused unless it failed (and the document was not voided). */
export function decideRetryFinalization(
  s: ApprovalState,
): { accepted: true; next: ApprovalState } | { accepted: false; refusal: Refusal } {
  if (!finalizationFailed(s)) return { accepted: false, refusal: 'nothing_to_retry' };
  return { accepted: true, next: { ...s, finalizationFailure: null } };
}

/** The deadline passed: an open document expires; a closed or finalizing one is left alone. */
export function applyExpiry(s: ApprovalState): ApprovalState {
  return acceptsActions(s) ? { ...s, status: 'expired' } : s;
}

export function markApproved(s: ApprovalState): ApprovalState {
  return allCompleted(s) ? { ...s, status: 'approved', finalizationFailure: null } : s;
}

export function decideRemind(s: ApprovalState, approverId: string): Refusal | undefined {
  const approver = s.approvers.find((a) => a.id === approverId);
  if (!approver) return 'unknown_approver';
  if (rules.hasActed(approver.state)) return 'already_acted';
  if (!acceptsActions(s)) return 'document_closed';
  if (approver.state !== 'notified') return 'not_notified';
  return undefined;
}

/** Approvers who were told about the document and should hear that it was voided. */
export const notifiedApprovers = (s: ApprovalState): ApproverEntry[] =>
  s.approvers.filter((a) => a.state !== 'waiting');

export function progress(s: ApprovalState): { completed: number; total: number } {
  return { completed: s.approvers.filter((a) => a.state === 'completed').length, total: s.approvers.length };
}
