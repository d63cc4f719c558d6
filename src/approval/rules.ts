import type { ApproverStatus, DocumentStatus, WorkflowType } from '../domain/model.ts';

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
 * The document accepts actions (an approver's, a void, a reminder): it is open, and not every approver has
 * completed (then it is being finalized); an approver who delegated counts for nothing here (their delegate does).
 */
export const acceptsActions = (status: DocumentStatus, approvers: readonly ApproverStatus[]): boolean =>
  isOpen(status) && !approvers.every((a) => a === 'completed' || a === 'delegated');

/**
 * Whose action the document waits for, of approvers in `order_index` order: sequential, the first who has not
 * acted; parallel, everyone who has not acted; nobody once the document no longer accepts actions.
 */
export function currentApprovers<A>(
  workflowType: WorkflowType,
  status: DocumentStatus,
  ordered: readonly A[],
  statusOf: (approver: A) => ApproverStatus,
): A[] {
  if (!acceptsActions(status, ordered.map(statusOf))) return [];
  const waiting = ordered.filter((a) => !hasActed(statusOf(a)));
  return workflowType === 'sequential' ? waiting.slice(0, 1) : waiting;
}
