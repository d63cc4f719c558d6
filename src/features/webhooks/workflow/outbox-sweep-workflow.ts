import { continueAsNew, proxyActivities, setWorkflowOptions, sleep } from '@temporalio/workflow';
import type { OutboxSweepInput, WebhookActivities } from '../definitions.ts';

const activities = proxyActivities<WebhookActivities>({
  startToCloseTimeout: '5 minutes',
  // The next round tries again; a sweep that keeps failing must not end the workflow.
  retry: { initialInterval: '5 seconds', maximumAttempts: 3 },
});

/** Rounds per run before continue-as-new keeps the history short. */
const ROUNDS_PER_RUN = 200;

/**
 * Dispatches stranded webhook events, round after round, for as long as the service exists: the safety net under
 * dispatch-after-commit, so an event committed by a process that died before dispatching it is still delivered.
 *
 * It never ends, so it is not pinned to the worker version that started it (every workflow else is): it moves to
 * the current version at its next workflow task, and an old version can drain and be retired. A change to its
 * commands therefore needs `patched()`, as before worker versioning.
 */
export async function webhookOutboxSweepWorkflow(input: OutboxSweepInput): Promise<void> {
  for (let round = 0; round < ROUNDS_PER_RUN; round++) {
    try {
      await activities.dispatchStrandedWebhookEvents({ olderThanMs: input.strandedAfterMs });
    } catch {
      // Logged by the worker; the next round starts over.
    }
    await sleep(input.intervalMs);
  }
  await continueAsNew<typeof webhookOutboxSweepWorkflow>(input);
}
setWorkflowOptions({ versioningBehavior: 'AUTO_UPGRADE' }, webhookOutboxSweepWorkflow);
