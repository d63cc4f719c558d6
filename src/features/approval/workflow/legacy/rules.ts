import type { ApproverStatus, DocumentStatus, WorkflowType } from './model.ts';

/** The approval rules the legacy workflow applies, as they stood when it was frozen. */

const OPEN_STATUSES = ['pending', 'in_progress'] as const satisfies readonly DocumentStatus[];

export type ApprovalStatus = Exclude<DocumentStatus, 'draft'>;

const isOpen = (status: DocumentStatus): boolean =>
  (OPEN_STATUSES as readonly DocumentStatus[]).includes(status);

export const hasActed = (status: ApproverStatus): boolean =>
  status === 'completed' || status === 'rejected' || status === 'delegated';

export const acceptsActions = (status: DocumentStatus, approvers: readonly ApproverStatus[]): boolean =>
  isOpen(status) && !approvers.every((a) => a === 'completed' || a === 'delegated');

/**
 * Whose action the document waits for: sequential, the signing group of the lowest `order_index` not yet acted
 * (only the first waiting approver with `oneAtATime`, the rule before signing groups); parallel, everyone.
 */
export function currentApprovers<A extends { orderIndex: number }>(
  workflowType: WorkflowType,
  status: DocumentStatus,
  ordered: readonly A[],
  statusOf: (approver: A) => ApproverStatus,
  options: { oneAtATime?: boolean } = {},
): A[] {
  if (!acceptsActions(status, ordered.map(statusOf))) return [];
  const waiting = ordered.filter((a) => !hasActed(statusOf(a)));
  if (workflowType !== 'sequential') return waiting;
  if (options.oneAtATime) return waiting.slice(0, 1);
  const turn = Math.min(...waiting.map((a) => a.orderIndex));
  return waiting.filter((a) => a.orderIndex === turn);
}

export const hasSharedPositions = (approvers: readonly { orderIndex: number }[]): boolean =>
  new Set(approvers.map((a) => a.orderIndex)).size < approvers.length;
