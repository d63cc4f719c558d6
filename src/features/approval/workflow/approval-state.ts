import type { ApproverStatus, WorkflowType } from '../../../domain/model.ts';
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
  /** The document allows delegation (its `allow_delegation` when sent). */
  allowDelegation?: boolean;
}

export function createApprovalState(
  workflowType: WorkflowType,
  approvers: readonly ApproverSnapshot[],
  options: { allowDelegation?: boolean } = {},
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
  return {
    workflowType,
    status: 'pending',
    approvers: ordered,
    ...(options.allowDelegation && { allowDelegation: true }),
  };
}

/** Every approver completed; one who delegated is replaced by their delegate, who must have completed. */
export const allCompleted = (s: ApprovalState): boolean =>
  s.approvers.every((a) => a.state === 'completed' || a.state === 'delegated');

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
  rules.currentApprovers(s.workflowType, s.status, s.approvers, (a) => a.state);

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

/**
 * One approver completes or rejects. Exactly one answer for every race: the state it is applied to decides. The
 * API applies it to the read model under the document's row lock (act-in-database.ts); the run then follows.
 */
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

/**
 * An action the API already decided and recorded (under the document's row lock, with the rules of `../rules.ts`):
 * the approver completes or rejects. Applied whatever the run thought of their turn, since the database decided;
 * an approver unknown or already acted, or a document no longer open, leaves the state as it is (a repeat).
 */
export function followAction(s: ApprovalState, approverId: string, kind: ActionKind): ApprovalState {
  const approver = s.approvers.find((a) => a.id === approverId);
  if (!approver || rules.hasActed(approver.state) || !rules.isOpen(s.status)) return s;
  const approvers = s.approvers.map((a) =>
    a.id === approverId
      ? { ...a, state: kind === 'complete' ? ('completed' as const) : ('rejected' as const) }
      : a,
  );
  return { ...s, approvers, status: kind === 'reject' ? 'rejected' : 'in_progress' };
}

export type DelegationDecision =
  { accepted: true; next: ApprovalState } | { accepted: false; refusal: Refusal };

/**
 * The approver whose turn it is hands their step to a delegate: they become `delegated` and the
 * delegate — a new approver `delegateId` with the same `order_index` and action — takes their place in the order,
 * `waiting` until notified. Refused when the document does not allow delegation, and on the same terms as an
 * action (not an approver, already acted or delegated, document closed, not their turn); an id already on the
 * document is refused as `already_acted` (a repeated request).
 */
export function decideDelegation(
  s: ApprovalState,
  approverId: string,
  delegateId: string,
): DelegationDecision {
  const approver = s.approvers.find((a) => a.id === approverId);
  if (!approver) return { accepted: false, refusal: 'unknown_approver' };
  if (!s.allowDelegation) return { accepted: false, refusal: 'delegation_not_allowed' };
  if (rules.hasActed(approver.state)) return { accepted: false, refusal: 'already_acted' };
  if (!acceptsActions(s)) return { accepted: false, refusal: 'document_closed' };
  if (!currentApprovers(s).some((a) => a.id === approverId))
    return { accepted: false, refusal: 'not_your_turn' };
  if (s.approvers.some((a) => a.id === delegateId)) return { accepted: false, refusal: 'already_acted' };

  const delegate: ApproverEntry = {
    id: delegateId,
    orderIndex: approver.orderIndex,
    actionType: approver.actionType,
    state: 'waiting',
  };
  const approvers = s.approvers.flatMap((a) =>
    a.id === approverId ? [{ ...a, state: 'delegated' as const }, delegate] : [a],
  );
  return { accepted: true, next: { ...s, approvers } };
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

/** Approvers who were told about the document and should hear that it was voided (not those who delegated). */
export const notifiedApprovers = (s: ApprovalState): ApproverEntry[] =>
  s.approvers.filter((a) => a.state !== 'waiting' && a.state !== 'delegated');

/** An approver who delegated is replaced by their delegate: the total counts the step once. */
export function progress(s: ApprovalState): { completed: number; total: number } {
  return {
    completed: s.approvers.filter((a) => a.state === 'completed').length,
    total: s.approvers.filter((a) => a.state !== 'delegated').length,
  };
}
