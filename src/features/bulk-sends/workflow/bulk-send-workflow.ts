import { condition, continueAsNew, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import {
  cancelSignal,
  progressQuery,
  type BulkSendActivities,
  type BulkSendWorkflowInput,
  type PageResult,
} from '../definitions.ts';

const { openBulkSend, finishBulkSend } = proxyActivities<BulkSendActivities>({
  startToCloseTimeout: '1 minute',
  // PostgreSQL away: wait for it, however long; nothing here can fail for good.
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

// A page ends itself within its time budget (it stops taking rows after two minutes) and heartbeats meanwhile;
// a worker that dies mid-page is noticed within the heartbeat time-out and the page runs again: rows already
// sent are skipped, a row's document is never made twice. The run's input may set another heartbeat time-out
// (BULK_SEND_HEARTBEAT_SECONDS); runs started before it could keep this one.
const PAGE_POLICY = {
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
} as const;

/** What the workflow knows, for the `progress` query and for its loop. */
class BulkSendRun {
  afterRow: number;
  pages = 0;
  pausedUntil: string | null = null;
  cancelled = false;
  constructor(input: BulkSendWorkflowInput) {
    this.afterRow = input.afterRow;
  }
  progress() {
    return { afterRow: this.afterRow, pages: this.pages, pausedUntil: this.pausedUntil };
  }
}

/**
 * Works through a bulk send's rows, page after page, until none is left or it is cancelled; then completes it.
 * While the messaging tier's share is spent it waits on a durable timer until the share frees up, woken early by a
 * cancel.
 * After `pagesPerRun` pages (or when Temporal suggests it) it continues as new from the last row done.
 */
export async function bulkSendWorkflow(input: BulkSendWorkflowInput): Promise<void> {
  const run = new BulkSendRun(input);
  const { runBulkSendPage } = proxyActivities<BulkSendActivities>({
    ...PAGE_POLICY,
    heartbeatTimeout: input.heartbeatMs ?? PAGE_POLICY.heartbeatTimeout,
  });
  setHandler(cancelSignal, () => void (run.cancelled = true));
  setHandler(progressQuery, () => run.progress());

  if (!input.continued && !(await openBulkSend({ bulkSendId: input.bulkSendId }))) return;

  for (;;) {
    if (run.cancelled) return;
    const page: PageResult = await runBulkSendPage({ bulkSendId: input.bulkSendId, afterRow: run.afterRow });
    run.afterRow = page.afterRow;
    run.pages += 1;
    if (page.cancelled) return;
    if (page.done) break;
    if (page.pausedUntil) {
      run.pausedUntil = page.pausedUntil;
      // Workflow time: deterministic. At least a second, so a clock that disagrees never spins the loop.
      const waitMs = Math.max(1000, Date.parse(page.pausedUntil) - Date.now());
      await condition(() => run.cancelled, waitMs);
      run.pausedUntil = null;
      continue;
    }
    if (run.pages >= input.pagesPerRun || workflowInfo().continueAsNewSuggested) {
      await continueAsNew<typeof bulkSendWorkflow>({ ...input, afterRow: run.afterRow, continued: true });
    }
  }
  await finishBulkSend({ bulkSendId: input.bulkSendId });
}
