import { ApplicationFailure } from '@temporalio/activity';
import type { Db } from '../../../db/knex.ts';
import { actionEvidenceStore, type StoredEvidence } from '../action-evidence-store.ts';
import { approversStore } from '../../documents/approvers-store.ts';
import { delegationsStore } from '../delegations-store.ts';
import { serializeApprover } from '../../documents/serialize.ts';
import {
  ACTION_NOT_WRITTEN,
  type ApprovalActivities,
  type RecordActionInput,
  type RecordDelegationInput,
} from '../definitions.ts';
import { actionEventKeys, writeApproverAction } from '../action-write.ts';
import { hasActed } from '../rules.ts';
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

/** The approver's action, as runs that take the act update write it (see writeApproverAction). */
async function recordApproverAction({ events }: ActivityContext, input: RecordActionInput): Promise<void> {
  const keys = actionEventKeys(input.documentId, input.approverId, input.kind);
  await events.inTransaction(keys, async (trx) => {
    const { document, approvers, approver } = await loadForWorkflow(trx, input.documentId, input.approverId);
    if (hasActed(approver!.status)) return;
    const stored = await actionEvidence(trx, input);
    await writeApproverAction(events, trx, {
      documentId: input.documentId,
      document,
      approvers,
      approver: approver!,
      kind: input.kind,
      evidence: stored?.evidence ?? input.evidence!,
      ...(stored && { evidenceId: stored.id }),
    });
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
