import { ApplicationFailure } from '@temporalio/activity';
import type { Db } from '../../../db/knex.ts';
import { actionEvidenceStore, type StoredEvidence } from '../action-evidence-store.ts';
import { approversStore } from '../../documents/approvers-store.ts';
import { delegationsStore } from '../delegations-store.ts';
import { documentsStore } from '../../documents/documents-store.ts';
import { serializeApprover } from '../../documents/serialize.ts';
import {
  ACTION_NOT_WRITTEN,
  type ApprovalActivities,
  type RecordActionInput,
  type RecordDelegationInput,
} from '../definitions.ts';
import { hasActed, OPEN_STATUSES } from '../rules.ts';
import { type ActivityContext, loadForWorkflow } from './context.ts';
import type { FinalizeActivities } from './finalize.ts';
import { notifyEach } from './notify.ts';

/**
 * The evidence row an action names (`evidenceId`), checked to be this approver's, for this action; undefined for
 * an action recorded before evidence rows existed, which carries its evidence inline.
 */
async function actionEvidence(db: Db, input: RecordActionInput): Promise<StoredEvidence | undefined> {
  if (input.evidenceId === undefined) {
    if (input.evidence) return undefined;
    // An update by id taken by a workflow worker older than evidence rows (an API upgraded before its workers):
    // that code drops the id, so the action's row is the approver's latest one still submitted.
    const latest = await actionEvidenceStore(db).latestSubmitted(input.approverId, input.kind);
    if (latest && latest.documentId === input.documentId) return latest;
    throw ApplicationFailure.nonRetryable(
      `The evidence of approver ${input.approverId}'s action is missing`,
      'evidence_missing',
    );
  }
  const stored = await actionEvidenceStore(db).find(input.evidenceId);
  if (
    !stored ||
    stored.documentId !== input.documentId ||
    stored.approverId !== input.approverId ||
    stored.kind !== input.kind
  ) {
    throw ApplicationFailure.nonRetryable(
      `The evidence ${input.evidenceId} of approver ${input.approverId}'s action is missing`,
      'evidence_missing',
    );
  }
  return stored;
}

/** The approver's action and, for a rejection, the document's: the one writer of pending → in_progress and → rejected. */
async function recordApproverAction({ events }: ActivityContext, input: RecordActionInput): Promise<void> {
  const key =
    input.kind === 'complete'
      ? `approver.completed:${input.approverId}`
      : `document.rejected:${input.documentId}`;
  const rejectedKey = `approver.rejected:${input.approverId}`;
  await events.inTransaction(input.kind === 'complete' ? [key] : [rejectedKey, key], async (trx) => {
    const { approver } = await loadForWorkflow(trx, input.documentId, input.approverId);
    if (hasActed(approver!.status)) return;
    const stored = await actionEvidence(trx, input);
    const e = stored?.evidence ?? input.evidence!;
    const acted = await approversStore(trx).update(approver!.id, {
      status: input.kind === 'complete' ? 'completed' : 'rejected',
      actedAt: new Date(e.at),
      actionChannel: e.channel,
      actionIp: e.ip ?? null,
      actionUserAgent: e.userAgent ?? null,
      actionMessageId: e.messageId ?? null,
      signatureKey: e.imageKey ?? null,
      typedName: e.typedName ?? null,
      rejectionReason: input.kind === 'reject' ? (e.reason ?? null) : null,
      // A reply in the approver's own WhatsApp chat proves their number.
      verifiedBy: e.verifiedBy ?? (e.channel === 'whatsapp' ? 'whatsapp_reply' : 'none'),
    });
    if (e.generatedSeal) await approversStore(trx).markGeneratedSeal(approver!.id);
    if (stored) await actionEvidenceStore(trx).markAccepted(stored.id);

    if (input.kind === 'complete') {
      const document =
        (await documentsStore(trx).transition(input.documentId, ['pending'], 'in_progress')) ??
        (await documentsStore(trx).findByIdUnscoped(input.documentId))!;
      await events.record(trx, { event: 'approver.completed', dedupeKey: key, document, approver: acted });
      return;
    }
    const open = (await documentsStore(trx).findByIdUnscoped(input.documentId))!;
    // The approver's own event first, with the document as it stood when they rejected; then the document's.
    await events.record(trx, {
      event: 'approver.rejected',
      dedupeKey: rejectedKey,
      document: open,
      approver: acted,
    });
    const document = await documentsStore(trx).transition(input.documentId, OPEN_STATUSES, 'rejected', {
      rejectionReason: e.reason ?? null,
      completedAt: new Date(e.at),
    });
    if (document)
      await events.record(trx, { event: 'document.rejected', dedupeKey: key, document, approver: acted });
  });
}

async function recordDelegation(
  { deps, events }: ActivityContext,
  input: RecordDelegationInput,
): Promise<void> {
  const key = `approver.delegated:${input.approverId}`;
  await events.inTransaction([key], async (trx) => {
    const { document, approver } = await loadForWorkflow(trx, input.documentId, input.approverId);
    const delegation = await delegationsStore(trx).find(input.delegationId);
    if (
      !delegation ||
      delegation.documentId !== input.documentId ||
      delegation.fromApproverId !== input.approverId ||
      delegation.delegateId !== input.delegateId
    ) {
      throw ApplicationFailure.nonRetryable(
        `The delegation ${input.delegationId} of approver ${input.approverId} is missing`,
        'delegation_missing',
      );
    }
    if (approver!.status === 'delegated') return; // a retry: the first attempt recorded it
    const delegate = await approversStore(trx).insertDelegate(approver!, {
      id: input.delegateId,
      name: delegation.name,
      phone: delegation.phone,
    });
    // Like every approver of a sent document, the delegate has a link from the start.
    await approversStore(trx).ensureLinkToken(delegate.id, deps.secrets);
    const delegated = await approversStore(trx).update(approver!.id, {
      status: 'delegated',
      actedAt: delegation.at,
      actionChannel: 'page',
      actionIp: delegation.ip,
      actionUserAgent: delegation.userAgent,
      verifiedBy: delegation.verifiedBy ?? 'none',
      delegatedToId: delegate.id,
      delegationReason: delegation.reason,
    });
    await delegationsStore(trx).markAccepted(delegation.id);
    // data.approver is who delegated (status delegated, delegated_to_id), data.delegate who takes the step.
    await events.record(trx, {
      event: 'approver.delegated',
      dedupeKey: key,
      document,
      approver: delegated,
      extra: { delegate: serializeApprover(delegate) },
    });
  });
}

/** recordApproverAction, its failure typed ACTION_NOT_WRITTEN (same retryability). */
async function writeAction(ctx: ActivityContext, action: RecordActionInput): Promise<void> {
  try {
    await recordApproverAction(ctx, action);
  } catch (err) {
    throw ApplicationFailure.create({
      type: ACTION_NOT_WRITTEN,
      message: err instanceof Error ? err.message : String(err),
      nonRetryable: err instanceof ApplicationFailure && err.nonRetryable === true,
      cause: err instanceof Error ? err : undefined,
    });
  }
}

type ActionActivities = Pick<
  ApprovalActivities,
  'recordApproverAction' | 'recordDelegation' | 'recordActionAndFinalize' | 'recordActionAndNotify'
>;

/**
 * The approvers' accepted actions and delegations, written to the read model with their events; an action and
 * what it made due (the next approval requests, or the finalization) in one activity.
 */
export function actionActivities(ctx: ActivityContext, finalize: FinalizeActivities): ActionActivities {
  return {
    recordApproverAction: (input) => recordApproverAction(ctx, input),
    recordDelegation: (input) => recordDelegation(ctx, input),
    async recordActionAndFinalize({ documentId, actions, idempotencyPrefix }) {
      for (const action of actions) await writeAction(ctx, action);
      return finalize.finalizeAndSendSignedCopies({ documentId, idempotencyPrefix });
    },
    async recordActionAndNotify({ action, notices }) {
      await writeAction(ctx, action);
      return notifyEach(ctx, notices);
    },
  };
}
