import { randomUUID } from 'node:crypto';
import type { Knex } from '../db/knex.ts';
import { approversStore } from '../db/stores/approvers-store.ts';
import { delegationsStore } from '../db/stores/delegations-store.ts';
import { documentsStore } from '../db/stores/documents-store.ts';
import type { VerifiedBy } from '../domain/model.ts';
import { AppError } from '../errors.ts';
import type { PageLink } from './act-from-page.ts';
import { ApprovalRefused, type ApprovalClient } from './client.ts';
import type { ApprovalView } from './definitions.ts';

export interface DelegationRequest {
  /** The delegate's name as the approver typed it (validated: one line, at most 255 characters). */
  name: string;
  /** Normalized E.164 digits. */
  phone: string;
  reason: string;
}

export interface DelegationEvidence {
  at: Date;
  ip: string | null;
  userAgent: string | null;
  verifiedBy: VerifiedBy;
}

/**
 * The approver hands their step to someone else from the approval page (issue 15 item 3). Refused with 409 when
 * the document does not allow delegation, with 422 (`phone`, in `messages.phoneTaken`) when the number is already
 * an approver of the document or a delegate being added. The delegation is stored first (name, phone, reason,
 * evidence) and the workflow is asked to take it with ids only; if it refuses, the row is removed and the refusal
 * becomes 409 (not their turn), 404 (not an approver) or 410 (already acted or delegated, document closed).
 */
export async function delegateFromPage(
  deps: { db: Knex; approvals: ApprovalClient },
  link: PageLink,
  request: DelegationRequest,
  evidence: DelegationEvidence,
  messages: { phoneTaken: string },
): Promise<ApprovalView & { delegateId: string }> {
  const { approver, document } = link;
  if (!document.allowDelegation)
    throw new AppError('conflict', 'This document does not allow delegation (allow_delegation is false)');
  const delegateId = randomUUID();
  const delegation = await deps.db.transaction(async (trx) => {
    // The document's row lock: two delegations to one number cannot both pass the check.
    await documentsStore(trx).findByIdUnscoped(document.id, { forUpdate: true });
    const phones = new Set([
      ...(await approversStore(trx).listByDocument(document.id)).map((a) => a.phone),
      ...(await delegationsStore(trx).pendingPhones(document.id)),
    ]);
    if (phones.has(request.phone)) throw AppError.validation({ phone: [messages.phoneTaken] });
    return delegationsStore(trx).submit({
      documentId: document.id,
      fromApproverId: approver.id,
      delegateId,
      name: request.name,
      phone: request.phone,
      reason: request.reason,
      at: evidence.at,
      ip: evidence.ip,
      userAgent: evidence.userAgent,
      verifiedBy: evidence.verifiedBy,
    });
  });
  try {
    const view = await deps.approvals.delegate(document.id, {
      approverId: approver.id,
      delegateId,
      delegationId: delegation.id,
    });
    return { ...view, delegateId };
  } catch (err) {
    // A lost answer (time-out) leaves the row: the workflow may still take it, and recordDelegation reads it.
    if (!(err instanceof ApprovalRefused)) throw err;
    await delegationsStore(deps.db).discard(delegation.id);
    if (
      err.refusal === 'not_your_turn' ||
      err.refusal === 'not_notified' ||
      err.refusal === 'delegation_not_allowed'
    )
      throw new AppError('conflict', err.message);
    if (err.refusal === 'unknown_approver') throw AppError.notFound('Approver');
    throw new AppError('gone', err.message);
  }
}
