import type { Knex } from '../../db/knex.ts';
import { approversStore, type Approver, type ApproverPatch } from './approvers-store.ts';
import { documentsStore, type Document } from './documents-store.ts';
import { AppError } from '../../errors.ts';
import type { ApproverInput, ApproverUpdate } from './inputs.ts';
import { LIMITS } from '../../domain/model.ts';
import { placementProblem, REFUSALS, requireDraft } from './rules.ts';

/**
 * Approver changes on a draft. Each runs in a transaction holding the document's row lock, so it cannot
 * interleave with a send (which takes the same lock) or with another change to the same document's approvers.
 */

export async function listApprovers(
  db: Knex,
  input: { accountId: string; documentId: string },
): Promise<{ document: Document; approvers: Approver[] }> {
  const document = await documentsStore(db).findById(input.accountId, input.documentId);
  if (!document) throw AppError.notFound('Document');
  return { document, approvers: await approversStore(db).listByDocument(document.id) };
}

export async function addApprover(
  db: Knex,
  input: { accountId: string; documentId: string; approver: ApproverInput },
): Promise<Approver> {
  return db.transaction(async (trx) => {
    const document = await documentsStore(trx).findByIdForUpdate(input.accountId, input.documentId);
    if (!document) throw AppError.notFound('Document');
    requireDraft(document, REFUSALS.addApprover);
    const store = approversStore(trx);
    const existing = await store.listByDocument(document.id);
    // A state the request cannot change (the same body is valid on another draft): 409, not 422.
    if (existing.length >= LIMITS.approversMax) {
      throw AppError.conflict(
        'too_many_approvers',
        `A document can have at most ${LIMITS.approversMax} approvers and this one has them all; remove one first`,
      );
    }
    const { approver } = input;
    // Without order_index: a position of its own after the others (a new group of one). With one that another
    // approver has, it joins that approver's signing group (product rules §4).
    let orderIndex = approver.orderIndex;
    if (orderIndex === undefined) {
      orderIndex = Math.max(0, ...existing.map((a) => a.orderIndex)) + 1;
      if (orderIndex > LIMITS.orderMax)
        throw AppError.conflict(
          'approver_order_full',
          `The last position (${LIMITS.orderMax}) is taken; give order_index explicitly`,
        );
    }
    const problem = placementProblem(approver.placement, document.pageCount);
    if (problem) throw AppError.validation({ page: [problem] });
    const [created] = await store.insertMany(document, [{ ...approver, orderIndex }]);
    return created!;
  });
}

/** The approver (scoped to the account) and its document, locked, for a change. */
async function lockForChange(
  trx: Knex.Transaction,
  accountId: string,
  id: string,
  refusal: string,
): Promise<{ approver: Approver; document: Document }> {
  const found = await approversStore(trx).findById(accountId, id);
  if (!found) throw AppError.notFound('Approver');
  const document = await documentsStore(trx).findByIdForUpdate(accountId, found.documentId);
  // Re-read under the document's lock: the approver may have gone meanwhile.
  const approver = document && (await approversStore(trx).findById(accountId, id));
  if (!document || !approver) throw AppError.notFound('Approver');
  requireDraft(document, refusal);
  return { approver, document };
}

export async function updateApprover(
  db: Knex,
  input: { accountId: string; id: string; update: ApproverUpdate },
): Promise<Approver> {
  return db.transaction(async (trx) => {
    const { approver, document } = await lockForChange(
      trx,
      input.accountId,
      input.id,
      REFUSALS.changeApprover,
    );
    const { update } = input;
    const store = approversStore(trx);
    // A position another approver has makes the two a signing group (product rules §4): no check.
    const problem = update.placement && placementProblem(update.placement, document.pageCount);
    if (problem) throw AppError.validation({ page: [problem] });
    const patch: ApproverPatch = { ...update };
    return (await store.update(approver.id, patch))!;
  });
}

export async function deleteApprover(db: Knex, input: { accountId: string; id: string }): Promise<void> {
  await db.transaction(async (trx) => {
    const { approver } = await lockForChange(trx, input.accountId, input.id, REFUSALS.removeApprover);
    await approversStore(trx).delete(approver.id);
  });
}
