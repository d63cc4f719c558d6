import type { ApproverStatus, DocumentStatus, WorkflowType } from '../../domain/model.ts';

/**
 * The approval rules that the workflow, its activities, the API, the approval page and WhatsApp replies all apply,
 * written once. Pure (no Node, no Temporal), so the workflow sandbox imports it.
 */

/** A document that has been sent and has not finished: the only statuses in which approvers act. */
export const OPEN_STATUSES = ['pending', 'in_progress'] as const satisfies readonly DocumentStatus[];
export type OpenStatus = (typeof OPEN_STATUSES)[number];

/** The statuses of a sent document. */
export type ApprovalStatus = Exclude<DocumentStatus, 'draft'>;

export const isOpen = (status: DocumentStatus): status is OpenStatus =>
  (OPEN_STATUSES as readonly DocumentStatus[]).includes(status);

/**
 * The approver completed, rejected or delegated (their delegate's row takes their place): their link is spent and
 * there is nothing to remind them of.
 */
export const hasActed = (status: ApproverStatus): boolean =>
  status === 'completed' || status === 'rejected' || status === 'delegated';

/**
 * How far a document has come, from its approvers' statuses in the read model: those completed, out of all but
 * the ones who delegated (each is replaced by their delegate, counted once).
 */
export const progressOf = (
  approvers: readonly { status: ApproverStatus }[],
): { completed: number; total: number } => ({
  completed: approvers.filter((a) => a.status === 'completed').length,
  total: approvers.filter((a) => a.status !== 'delegated').length,
});

/**
 * The document accepts actions (an approver's, a void, a reminder): it is open, and not every approver has
 * completed (then it is being finalized); an approver who delegated counts for nothing here (their delegate does).
 */
export const acceptsActions = (status: DocumentStatus, approvers: readonly ApproverStatus[]): boolean =>
  isOpen(status) && !approvers.every((a) => a === 'completed' || a === 'delegated');

/**
 * Whose action the document waits for (product rules §4). Sequential: the signing group whose turn it is — every
 * approver not yet acted of the lowest `order_index` that still has one (approvers sharing an `order_index` form a
 * group and act in any order among themselves; the next group's turn comes when the whole group has completed).
 * Parallel: everyone who has not acted (one group). Nobody once the document no longer accepts actions.
 */
export function currentApprovers<A extends { orderIndex: number }>(
  workflowType: WorkflowType,
  status: DocumentStatus,
  ordered: readonly A[],
  statusOf: (approver: A) => ApproverStatus,
): A[] {
  if (!acceptsActions(status, ordered.map(statusOf))) return [];
  const waiting = ordered.filter((a) => !hasActed(statusOf(a)));
  if (workflowType !== 'sequential') return waiting;
  const turn = Math.min(...waiting.map((a) => a.orderIndex));
  return waiting.filter((a) => a.orderIndex === turn);
}

/** Whether some approvers share an `order_index` (a signing group of more than one). */
export const hasSharedPositions = (approvers: readonly { orderIndex: number }[]): boolean =>
  new Set(approvers.map((a) => a.orderIndex)).size < approvers.length;
