import { ApplicationFailure } from '@temporalio/activity';
import { documentsStore } from '../../documents/documents-store.ts';
import { currentActivityContext } from '../../../temporal/activity-context.ts';
import { whileHeartbeating } from '../../../temporal/heartbeat.ts';
import type { ApprovalActivities, SignedCopiesInput } from '../definitions.ts';
import { OPEN_STATUSES } from '../rules.ts';
import type { ActivityContext } from './context.ts';
import type { FinalizeSlot } from '../../../pdf/workers/pdf-workers.ts';
import { type ApprovedRead, sendSignedCopies } from './signed-copies.ts';

/** Signed copies are tried in the finalization's activity only with at least this long left of its time-outs. */
const COPIES_MIN_BUDGET_MS = 30_000;

/** What is left of the running activity's time-outs, less a margin of a quarter; unlimited outside an activity. */
function copiesBudgetMs(): number {
  const info = currentActivityContext()?.info;
  if (!info) return Number.POSITIVE_INFINITY;
  const now = Date.now();
  const ends = [
    info.scheduleToCloseTimeoutMs ? info.scheduledTimestampMs + info.scheduleToCloseTimeoutMs : Infinity,
    info.startToCloseTimeoutMs
      ? info.currentAttemptScheduledTimestampMs + info.startToCloseTimeoutMs
      : Infinity,
  ];
  return (Math.min(...ends) - now) * 0.75;
}

/** How this attempt takes a PDF thread: `soon` as a local activity, else `wait` (also outside an activity). */
function finalizeSlot(): FinalizeSlot {
  const context = currentActivityContext();
  return context?.info.isLocal
    ? { whenBusy: 'soon', signal: context.cancellationSignal }
    : { whenBusy: 'wait' };
}

/** `work`, or a rejection once `ms` have passed (the work itself goes on; its sends are idempotent). */
function withinMs<T>(work: Promise<T>, ms: number): Promise<T> {
  if (!Number.isFinite(ms)) return work;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`the signed copies took longer than ${Math.round(ms)} ms`)),
      ms,
    );
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/**
 * Produces the signed PDF, then moves the document to `approved` with its event: the one writer of → approved.
 * Returns the document as that move left it (none when it was approved already) and its approvers as the
 * finalization read them.
 */
async function finalizeApprovedDocument(
  { deps, events }: ActivityContext,
  documentId: string,
): Promise<ApprovedRead> {
  // The local attempt (in the workflow task of the last action) takes a PDF thread only if it gets one soon, and
  // before its reads: behind a longer queue it is refused at once, and the ordinary activity waits its turn instead,
  // so no workflow task is held long, and an attempt that times out while it waits leaves the queue (one that times
  // out while composing has its thread stopped).
  const final = await whileHeartbeating(async () => deps.finalize?.(documentId, finalizeSlot()));
  const key = `document.approved:${documentId}`;
  const document = await events.inTransaction([key], async (trx) => {
    // A retried finalization that succeeded: the failure is over, which the move itself writes.
    const approved = await documentsStore(trx).approve(
      documentId,
      OPEN_STATUSES,
      final?.completedAt ?? new Date(),
    );
    // The event carries the permanent download URL of the signed file (data.document.download_url).
    if (approved)
      await events.record(trx, {
        event: 'document.approved',
        dedupeKey: key,
        document: approved,
        approvers: final?.approvers,
        documentExtra: final?.document,
      });
    return approved;
  });
  return { document, approvers: final?.approvers };
}

async function finalizeAndSendSignedCopies(ctx: ActivityContext, input: SignedCopiesInput) {
  const approved = await finalizeApprovedDocument(ctx, input.documentId);
  // The copies never make the finalization time out: they get what is left of this activity's time-outs
  // (less a margin), and what does not fit goes to sendSignedCopies on its own policy.
  const budget = copiesBudgetMs();
  if (budget < COPIES_MIN_BUDGET_MS) return { copies: null, retryCopies: true };
  try {
    // Heartbeating as the finalization does: the activity's heartbeat time-out still applies.
    const copies = await whileHeartbeating(() => withinMs(sendSignedCopies(ctx, input, approved), budget));
    return { copies, retryCopies: false };
  } catch (err) {
    const retryCopies = !(err instanceof ApplicationFailure && err.nonRetryable);
    ctx.deps.logger.warn(
      { err, documentId: input.documentId, retryCopies },
      'the signed copies did not go out with the finalization',
    );
    return { copies: null, retryCopies };
  }
}

export type FinalizeActivities = Pick<
  ApprovalActivities,
  'finalizeApprovedDocument' | 'finalizeAndSendSignedCopies' | 'sendSignedCopies'
>;

/** The approved document's signed PDF, its `approved` state and event, and the signed copies. */
export function finalizeActivities(ctx: ActivityContext): FinalizeActivities {
  return {
    finalizeApprovedDocument: async ({ documentId }) => {
      await finalizeApprovedDocument(ctx, documentId);
    },
    finalizeAndSendSignedCopies: (input) => finalizeAndSendSignedCopies(ctx, input),
    sendSignedCopies: (input) => sendSignedCopies(ctx, input),
  };
}
