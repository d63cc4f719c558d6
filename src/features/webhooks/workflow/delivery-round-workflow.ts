import { proxyActivities, setHandler } from '@temporalio/workflow';
import {
  deliveryRoundQuery,
  type DeliveryRoundView,
  type WebhookActivities,
  type WebhookDeliveryRoundInput,
} from '../definitions.ts';
import { runAttemptRound } from './attempt-round.ts';

const activities = proxyActivities<WebhookActivities>({
  // One attempt is at most the receiver time-out (10 s by default, 60 s at most) plus a few writes.
  startToCloseTimeout: '2 minutes',
  // The attempt heartbeats: a worker that dies mid-attempt is noticed within this, and the attempt retried.
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

/**
 * One round of attempts of one delivery, on its own: the first attempt at once, then the retry schedule on
 * durable timers until the receiver answers 2xx, answers 410 Gone, or the last attempt fails. The activity
 * records each attempt before this code decides, and the decision is written before the next timer starts.
 * Nothing else waits on this workflow, so a receiver that keeps refusing this event delays no other delivery.
 * At most eight attempts and seven timers: the history stays short, no continue-as-new is needed.
 */
export async function webhookDeliveryRoundWorkflow(input: WebhookDeliveryRoundInput): Promise<void> {
  const request = { deliveryId: input.deliveryId, firstAttempt: input.firstAttempt };
  let current: DeliveryRoundView = null;
  setHandler(deliveryRoundQuery, () => current);

  await runAttemptRound(
    activities,
    { request, webhookId: input.webhookId, retryScale: input.retryScale },
    (view) => {
      current = view;
    },
  );
  current = null;
}
