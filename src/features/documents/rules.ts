import { AppError, type ErrorDetails } from '../../errors.ts';
import type { Document } from './documents-store.ts';
import type { Placement } from '../../domain/model.ts';

/** The message of a 409 for an action the document's status forbids, naming the status (docs/product-rules.md §3). */
export const statusRefusal = (doc: Pick<Document, 'status'>, rule: string): string =>
  `Document is ${doc.status}; ${rule}`;

export function requireDraft(doc: Document, refusal: string): void {
  if (doc.status !== 'draft') throw AppError.conflict('not_a_draft', statusRefusal(doc, refusal));
}

export const REFUSALS = {
  update: 'only drafts can be updated.',
  delete: 'only drafts can be deleted.',
  addApprover: 'approvers can only be added to drafts.',
  changeApprover: 'approvers can only be changed while the document is a draft.',
  removeApprover: 'approvers can only be removed while the document is a draft.',
} as const;

export function placementProblem(placement: Placement | null, pageCount: number): string | undefined {
  if (!placement || placement.page <= pageCount) return undefined;
  return `page ${placement.page} is beyond the end of the PDF, which has ${pageCount} page${pageCount === 1 ? '' : 's'}`;
}

/** `approvers.N.page` problems for a list of approvers placed on a PDF of `pageCount` pages. */
export function placementDetails(
  approvers: readonly { placement: Placement | null }[],
  pageCount: number,
  path = 'approvers',
): ErrorDetails {
  const details: ErrorDetails = {};
  approvers.forEach((a, i) => {
    const problem = placementProblem(a.placement, pageCount);
    if (problem) details[`${path}.${i}.page`] = [problem];
  });
  return details;
}

export function expiresAtFrom(now: Date, days: number): Date {
  return new Date(now.getTime() + days * 24 * 60 * 60 * 1000);
}

/**
 * The cc recipients that are not approvers of the document: a number that is also an approver's is dropped, as the
 * approver receives the signed copy anyway (a number never gets two).
 */
export function ccWithoutApprovers<T extends { phone: string }>(
  cc: readonly T[],
  approvers: readonly { phone: string }[],
): T[] {
  const approverPhones = new Set(approvers.map((a) => a.phone));
  return cc.filter((c) => !approverPhones.has(c.phone));
}
