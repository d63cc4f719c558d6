import { documentsStore } from '../../documents/documents-store.ts';
import type { ApprovalActivities, BatchedNoticeResult, NotifyApproverInput } from '../definitions.ts';
import { markPending } from '../mark-pending.ts';
import { OPEN_STATUSES } from '../rules.ts';
import { type ActivityContext, DEFAULT_APPROVAL_POLICIES, loadForWorkflow } from './context.ts';
import { startedFrom } from './workflow-run.ts';

/**
 * Moves the document to `pending` for this workflow and records `document.sent`, once; false when the run was
 * ended instead (a send that never committed, the draft changed since).
 */
async function markSent(
  { deps, events }: ActivityContext,
  { documentId, workflowId }: { documentId: string; workflowId: string },
): Promise<boolean> {
  const key = `document.sent:${documentId}`;
  return events.inTransaction([key], async (trx) => {
    // Waits for the send's transaction: it holds this row lock until the document reads pending.
    const { document, approvers } = await loadForWorkflow(trx, documentId);
    if (document.status === 'draft') {
      // The send started this workflow and never committed (a crash, a lost connection). While this row lock
      // is held nothing can change the draft: move it here when it is still what the workflow started from.
      // When it was edited since, the workflow's approvers are not the document's: end this run (the send
      // never took effect) and leave a draft that can be sent again.
      const run = deps.workflowRun?.();
      if (run && !startedFrom(await run.input(), document, approvers)) {
        deps.logger.warn(
          { documentId, workflowId },
          'a send that never committed started this workflow, and the draft changed since: terminating it',
        );
        await run.terminate('The send that started this workflow did not commit; the draft changed since');
        return false;
      }
      const moved = await markPending(trx, deps.secrets, documentId, workflowId);
      if (moved) await events.record(trx, { event: 'document.sent', dedupeKey: key, document: moved });
      return true;
    }
    // The send committed `pending` with this workflow: record its event, once (keyed; a retry finds it).
    if (document.workflowId === workflowId)
      await events.record(trx, { event: 'document.sent', dedupeKey: key, document });
    return true;
  });
}

/** A document leaving its open states for a closing one, with its event; nothing when it is closed already. */
async function close(
  { events }: ActivityContext,
  documentId: string,
  to: 'voided' | 'expired',
  completedAt: Date,
): Promise<void> {
  const key = `document.${to}:${documentId}`;
  await events.inTransaction([key], async (trx) => {
    const closed = await documentsStore(trx).transition(documentId, OPEN_STATUSES, to, { completedAt });
    if (closed) await events.record(trx, { event: `document.${to}`, dedupeKey: key, document: closed });
  });
}

async function markFinalizationFailed(
  { deps, events }: ActivityContext,
  { documentId, error, failedAt }: { documentId: string; error: string; failedAt: string },
): Promise<void> {
  const key = `document.finalization_failed:${documentId}:${failedAt}`;
  await events.inTransaction([key], async (trx) => {
    const { document } = await loadForWorkflow(trx, documentId);
    if (document.finalizationState === 'failed' && document.finalizationFailedAt?.toISOString() === failedAt)
      return; // a retry: the first attempt recorded it
    const failed = await documentsStore(trx).transition(documentId, ['in_progress'], 'in_progress', {
      finalizationState: 'failed',
      finalizationError: error,
      finalizationFailedAt: new Date(failedAt),
    });
    if (!failed) return; // voided meanwhile
    deps.logger.error(
      { documentId, reference: failed.reference, error },
      'finalization failed for good: the document waits in_progress for documents:retry-finalization (or a void)',
    );
    await events.record(trx, { event: 'document.finalization_failed', dedupeKey: key, document: failed });
  });
}

type EventActivities = Pick<
  ApprovalActivities,
  | 'approvalPolicies'
  | 'markDocumentSent'
  | 'beginApproval'
  | 'markFinalizationFailed'
  | 'markDocumentVoided'
  | 'markDocumentExpired'
>;

/**
 * The read-model writes of the document's own states (sent, voided, expired, finalization failed), each with its
 * event in the same transaction. `notifyEach` sends the first approval requests of `beginApproval`.
 */
export function eventActivities(
  ctx: ActivityContext,
  notifyEach: (notices: NotifyApproverInput[]) => Promise<BatchedNoticeResult[]>,
): EventActivities {
  const approvalPolicies = () => Promise.resolve(ctx.deps.approvalPolicies ?? DEFAULT_APPROVAL_POLICIES);
  return {
    approvalPolicies,
    async markDocumentSent(input) {
      await markSent(ctx, input);
    },
    async beginApproval({ documentId, workflowId, notices }) {
      // A run that markSent ended (its send never committed) asks nobody.
      const sent = await markSent(ctx, { documentId, workflowId });
      return { policies: await approvalPolicies(), notices: sent ? await notifyEach(notices) : [] };
    },
    markFinalizationFailed: (input) => markFinalizationFailed(ctx, input),
    markDocumentVoided: ({ documentId, at }) => close(ctx, documentId, 'voided', new Date(at)),
    markDocumentExpired: ({ documentId }) => close(ctx, documentId, 'expired', new Date()),
  };
}
