import { AppError, type ErrorDetails } from '../errors.ts';
import type { Document } from '../db/stores/documents-store.ts';
import type { Placement } from '../domain/model.ts';

/** The message of a 409 for an action the document's status forbids, naming the status (docs/product-rules.md §3). */
export const statusRefusal = (doc: Pick<Document, 'status'>, rule: string): string =>
  `Document is ${doc.status}; ${rule}`;

export function requireDraft(doc: Document, refusal: string): void {
  if (doc.status !== 'draft') throw AppError.conflict(statusRefusal(doc, refusal));
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
 * `cc.N.phone` problems: a cc recipient whose number is also an approver's of the same document is refused (the
 * approver's own signed copy goes to that number; a second one would be noise, and a number never gets two).
 */
export function ccDetails(
  cc: readonly { phone: string }[],
  approvers: readonly { phone: string }[],
): ErrorDetails {
  const details: ErrorDetails = {};
  const approverPhones = new Set(approvers.map((a) => a.phone));
  cc.forEach((c, i) => {
    if (approverPhones.has(c.phone))
      details[`cc.${i}.phone`] = [
        `${c.phone} is an approver of this document, who receives the signed copy as an approver; remove it from cc`,
      ];
  });
  return details;
}

/** An approver added or changed on a draft may not take a number of the document's cc (422 on `phone`). */
export function refuseCcPhone(document: Pick<Document, 'cc'>, phone: string | undefined): void {
  if (phone === undefined) return;
  const i = document.cc.findIndex((c) => c.phone === phone);
  if (i >= 0)
    throw AppError.validation({
      phone: [
        `${phone} is cc.${i} of this document; remove it from cc first (an approver gets the signed copy anyway)`,
      ],
    });
}
