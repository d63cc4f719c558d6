import { actionEvidenceStore } from '../action-evidence-store.ts';
import { documentsStore } from '../../documents/documents-store.ts';
import { approvalSignalsStore } from '../approval-signals-store.ts';
import type {
  ApprovalActivities,
  BatchedNoticeResult,
  CloseInput,
  CloseResult,
  MarkSentInput,
  NotifyApproverInput,
} from '../definitions.ts';
import { markPending } from '../mark-pending.ts';
import { acceptsActions, OPEN_STATUSES } from '../rules.ts';
import {
  type ActivityContext,
  DEFAULT_APPROVAL_POLICIES,
  type LoadedDocument,
  loadForWorkflow,
} from './context.ts';
import { startedFrom } from './workflow-run.ts';

/**
 * Moves the document to `pending` for this workflow and records `document.sent`, once; the document and its
 * approvers as committed, or undefined when the run was ended instead (a send that never committed, the draft
 * changed since).
 */
async function markSent(
  { deps, events }: ActivityContext,
  { documentId, workflowId, protocol }: MarkSentInput,
): Promise<LoadedDocument | undefined> {
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
        return undefined;
      }
      const moved = await markPending(trx, deps.secrets, documentId, workflowId, approvers);
      // Issuing the link tokens changes nothing an event carries of the approvers.
      if (moved)
        await events.record(trx, { event: 'document.sent', dedupeKey: key, document: moved, approvers });
      if (protocol) await approvalSignalsStore(trx).setProtocol(documentId, protocol);
      // The link tokens issued here are not in `approvers`: a notice issues its approver's own (ensureLinkToken).
      return { document: moved ?? document, approvers };
    }
    // Before any approver is asked (the requests follow this transaction), so no action comes the other way.
    if (protocol && document.workflowId === workflowId)
      await approvalSignalsStore(trx).setProtocol(documentId, protocol);
    // The send committed `pending` with this workflow: record its event, once (keyed; a retry finds it).
    if (document.workflowId === workflowId)
      await events.record(trx, { event: 'document.sent', dedupeKey: key, document, approvers });
    return { document, approvers };
  });
}

/**
 * A document leaving its open states for a closing one, with its event. `conditional` (closeDocument): only while
 * it accepts actions as the read model has them (a void also when its finalization failed), so a void or an
 * expiry never overtakes an action the API recorded first; the recorded actions come back for the run to follow.
 */
async function close(
  { events }: ActivityContext,
  { documentId, to, at }: CloseInput,
  conditional: boolean,
): Promise<CloseResult> {
  const key = `document.${to}:${documentId}`;
  return events.inTransaction([key], async (trx) => {
    const { document, approvers } = await loadForWorkflow(trx, documentId);
    const accepted = conditional ? await actionEvidenceStore(trx).acceptedOn(documentId) : [];
    const actions = accepted.map((e) => ({ approverId: e.approverId, kind: e.kind, evidenceId: e.id }));
    if (document.status === to) return { closed: true, actions }; // a retry: the first attempt wrote it
    const open =
      acceptsActions(
        document.status,
        approvers.map((a) => a.status),
      ) ||
      (to === 'voided' && document.status === 'in_progress' && document.finalizationState === 'failed');
    if (conditional && !open) return { closed: false, actions };
    const completedAt = at ? new Date(at) : new Date();
    const closed = await documentsStore(trx).transition(documentId, OPEN_STATUSES, to, { completedAt });
    if (closed)
      await events.record(trx, { event: `document.${to}`, dedupeKey: key, document: closed, approvers });
    return { closed: closed !== undefined, actions };
  });
}

async function markFinalizationFailed(
  { deps, events }: ActivityContext,
  { documentId, error, failedAt }: { documentId: string; error: string; failedAt: string },
): Promise<void> {
  const key = `document.finalization_failed:${documentId}:${failedAt}`;
  await events.inTransaction([key], async (trx) => {
    const { document, approvers } = await loadForWorkflow(trx, documentId);
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
    await events.record(trx, {
      event: 'document.finalization_failed',
      dedupeKey: key,
      document: failed,
      approvers,
    });
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
  | 'closeDocument'
>;

/**
 * The read-model writes of the document's own states (sent, voided, expired, finalization failed), each with its
 * event in the same transaction. `notifyEach` sends the first approval requests of `beginApproval`.
 */
export function eventActivities(
  ctx: ActivityContext,
  notifyEach: (notices: NotifyApproverInput[], loaded: LoadedDocument) => Promise<BatchedNoticeResult[]>,
): EventActivities {
  const approvalPolicies = () => Promise.resolve(ctx.deps.approvalPolicies ?? DEFAULT_APPROVAL_POLICIES);
  return {
    approvalPolicies,
    async markDocumentSent(input) {
      await markSent(ctx, input);
    },
    async beginApproval({ documentId, workflowId, notices, protocol }) {
      // A run that markSent ended (its send never committed) asks nobody.
      const sent = await markSent(ctx, { documentId, workflowId, ...(protocol && { protocol }) });
      return { policies: await approvalPolicies(), notices: sent ? await notifyEach(notices, sent) : [] };
    },
    markFinalizationFailed: (input) => markFinalizationFailed(ctx, input),
    async markDocumentVoided({ documentId, at }) {
      await close(ctx, { documentId, to: 'voided', at }, false);
    },
    async markDocumentExpired({ documentId }) {
      await close(ctx, { documentId, to: 'expired' }, false);
    },
    closeDocument: (input) => close(ctx, input, true),
  };
}
