import { condition, continueAsNew, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import {
  DEFAULT_IDLE_MS,
  deliveryQueueQuery,
  enqueueDeliverySignal,
  type DeliveryQueueView,
  type DeliveryRequest,
  type WebhookActivities,
  type WebhookDeliveryWorkflowInput,
} from '../definitions.ts';
import { runAttemptRound } from './attempt-round.ts';
import { createQueueState, dequeue, enqueue } from './delivery-queue.ts';

const activities = proxyActivities<WebhookActivities>({
  // One attempt is at most the receiver time-out (10 s by default, 60 s at most) plus a few writes.
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

/** Well under Temporal's limits; a long-lived queue starts afresh with its state carried over. */
const HISTORY_LIMIT = 5_000;

/**
 * The previous design (no longer started: see delivery-round-workflow.ts), kept unchanged and registered so that
 * queues started before the change drain; its recorded histories must keep replaying (test/histories/webhooks).
 *
 * Delivers one webhook's deliveries of one document, in the order they were signalled, one at a time. Each round
 * runs the retry schedule on durable timers; the activity records each attempt before this code decides. Once the
 * queue stays empty for `idleMs` the workflow completes; the next dispatch starts it again (signal-with-start).
 */
export async function webhookDeliveryWorkflow(
  input: WebhookDeliveryWorkflowInput,
): Promise<DeliveryQueueView> {
  let state = createQueueState(input.carried);
  let current: DeliveryQueueView['current'] = null;
  const view = (): DeliveryQueueView => ({ queued: state.queue.slice(current ? 1 : 0), current });

  setHandler(enqueueDeliverySignal, (request) => {
    state = enqueue(state, request);
  });
  setHandler(deliveryQueueQuery, view);

  const deliver = async (request: DeliveryRequest) => {
    await runAttemptRound(
      activities,
      { request, webhookId: input.webhookId, retryScale: input.retryScale },
      (view) => {
        current = view;
      },
    );
  };

  for (;;) {
    const head = state.queue[0];
    if (head) {
      await deliver(head);
      current = null;
      state = dequeue(state);
      const info = workflowInfo();
      if (info.continueAsNewSuggested || info.historyLength > HISTORY_LIMIT) {
        await continueAsNew<typeof webhookDeliveryWorkflow>({ ...input, carried: state });
      }
      continue;
    }
    const more = await condition(() => state.queue.length > 0, input.idleMs ?? DEFAULT_IDLE_MS);
    // A signal that lands in the same activation as the idle timer still counts.
    if (!more && state.queue.length === 0) break;
  }
  return view();
}
