import { randomUUID } from 'node:crypto';
import type { Knex } from '../../db/knex.ts';
import { approversStore } from '../documents/approvers-store.ts';
import { delegationsStore, type Delegation } from './delegations-store.ts';
import { documentsStore } from '../documents/documents-store.ts';
import type { VerifiedBy } from '../../domain/model.ts';
import { AppError } from '../../errors.ts';
import type { PageLink } from './act-from-page.ts';
import { answerLost, ApprovalRefused, type ApprovalClient } from './client.ts';
import type { ApprovalView, Refusal } from './definitions.ts';
import { hasActed } from './rules.ts';

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

/** The page's words for the answers only this function gives (in the approver's language). */
export interface DelegationMessages {
  phoneTaken: string;
  /** The workflow has an earlier delegation of this step (to `name`) and took it. */
  alreadyDelegated: (name: string) => string;
  /** The workflow has an earlier delegation of this step (to `name`) and has not answered yet. */
  stillPending: (name: string) => string;
  /** The delegation is stored but the workflow's answer was lost: sending it again tells whether it was taken. */
  unconfirmed: string;
  /** The workflow's refusal, in the approver's language (the page shows it as it is). */
  refused: (refusal: Refusal | 'workflow_closed') => string;
}

/**
 * A request younger than this may still be on its way to Temporal (its caller waits up to the answer time-out):
 * when Temporal does not know its update yet, another approver's request does not treat it as lost.
 */
const IN_FLIGHT_MARGIN_MS = 10_000;

/**
 * The approver hands their step to someone else from the approval page. Refused with 409 when
 * the document does not allow delegation, with 422 (`phone`, in `messages.phoneTaken`) when the number is already
 * an approver of the document or a delegate being added. The delegation is stored first (name, phone, reason,
 * evidence) and the workflow is asked to take it with ids only (the update's id is the row's id); if it refuses,
 * the row is removed and the refusal becomes 409 (not their turn), 404 (not an approver) or 410 (already acted or
 * delegated, document closed).
 *
 * When the answer is lost (a time-out, Temporal unreachable) the row stays `submitted`, as an action's evidence
 * does (act-from-page.ts), and the approver hears 503 (`messages.unconfirmed`): the workflow may still take it,
 * and recordDelegation marks it `accepted` if it does. Such a row is settled by the next delegation request on the
 * document that it concerns (see `settleLeftovers`): asked by Temporal for the update's outcome, it becomes
 * `accepted` (the workflow's), is deleted (refused) or becomes `not_taken` (never taken), so its phone number does
 * not block the document for good, and the approver who sends the same delegation again gets its real answer.
 */
export async function delegateFromPage(
  deps: { db: Knex; approvals: ApprovalClient },
  link: PageLink,
  request: DelegationRequest,
  evidence: DelegationEvidence,
  messages: DelegationMessages,
): Promise<ApprovalView & { delegateId: string }> {
  const { approver, document } = link;
  if (!document.allowDelegation)
    throw new AppError(
      'delegation_not_allowed',
      'This document does not allow delegation (allow_delegation is false)',
    );
  const again = await settleLeftovers(deps, link, request, messages);
  if (again) return ask(deps, link, again, messages);
  const delegateId = randomUUID();
  const delegation = await deps.db.transaction(async (trx) => {
    // The document's row lock: two delegations to one number cannot both pass the check, and an action the API
    // records for this approver (act-in-database.ts, under the same lock) either came first or sees this row.
    await documentsStore(trx).findByIdUnscoped(document.id, { forUpdate: true });
    const approvers = await approversStore(trx).listByDocument(document.id);
    if (hasActed(approvers.find((a) => a.id === approver.id)?.status ?? 'completed'))
      throw new AppError('gone', messages.refused('already_acted'));
    const phones = new Set([
      ...approvers.map((a) => a.phone),
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
  return ask(deps, link, delegation, messages);
}

/** Asks the workflow to take a stored delegation, and words its answer. */
async function ask(
  deps: { db: Knex; approvals: ApprovalClient },
  link: PageLink,
  delegation: Pick<Delegation, 'id' | 'delegateId'>,
  messages: DelegationMessages,
): Promise<ApprovalView & { delegateId: string }> {
  const { approver, document } = link;
  try {
    const view = await deps.approvals.delegate(document.id, {
      approverId: approver.id,
      delegateId: delegation.delegateId,
      delegationId: delegation.id,
    });
    return { ...view, delegateId: delegation.delegateId };
  } catch (err) {
    if (!(err instanceof ApprovalRefused)) {
      // A lost answer leaves the row: the workflow may still take it, and recordDelegation reads it.
      if (answerLost(err))
        throw new AppError('service_unavailable', messages.unconfirmed, {}, { 'Retry-After': '5' });
      throw err;
    }
    await delegationsStore(deps.db).discard(delegation.id);
    if (
      err.refusal === 'not_your_turn' ||
      err.refusal === 'not_notified' ||
      err.refusal === 'delegation_not_allowed'
    )
      throw new AppError(
        err.refusal === 'delegation_not_allowed' ? 'delegation_not_allowed' : 'action_refused',
        messages.refused(err.refusal),
      );
    if (err.refusal === 'unknown_approver') throw AppError.notFound('Approver');
    throw new AppError('gone', messages.refused(err.refusal));
  }
}

/**
 * Settles the rows still `submitted` that stand in this request's way: the approver's own (an earlier request of
 * theirs whose answer was lost) and anyone's for the same phone number. Returns the approver's own row for this
 * same number, to be sent again under its own id (Temporal answers once for both); throws when the workflow has an
 * earlier delegation of this step (410 taken, 409 not answered yet); otherwise deletes what was refused, marks
 * `not_taken` what Temporal never took, and leaves rows that may still be on their way.
 */
async function settleLeftovers(
  deps: { db: Knex; approvals: ApprovalClient },
  link: PageLink,
  request: DelegationRequest,
  messages: DelegationMessages,
): Promise<Delegation | undefined> {
  const { approver, document } = link;
  const store = delegationsStore(deps.db);
  const inFlightSince = Date.now() - deps.approvals.answerTimeoutMs - IN_FLIGHT_MARGIN_MS;
  for (const row of await store.submitted(document.id)) {
    const own = row.fromApproverId === approver.id;
    if (own && row.phone === request.phone) return row;
    if (!own && row.phone !== request.phone) continue;
    const outcome = await deps.approvals.delegationOutcome(document.id, row.id);
    if (outcome === 'refused') await store.discard(row.id);
    else if (outcome === 'not_taken') {
      // Another approver's request may not have reached Temporal yet; this approver's own cannot matter any more
      // (the workflow takes one delegation of a step: should the old one arrive, this one is refused).
      if (own || row.createdAt.getTime() < inFlightSince) await store.markNotTaken(row.id);
    } else if (own) {
      if (outcome === 'accepted') throw new AppError('gone', messages.alreadyDelegated(row.name));
      throw new AppError('delegation_pending', messages.stillPending(row.name));
    }
    // Someone else's delegation to this number, taken or being taken: the phone check refuses this one.
  }
  return undefined;
}
