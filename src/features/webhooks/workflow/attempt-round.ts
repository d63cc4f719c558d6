import { sleep } from '@temporalio/workflow';
import type { DeliveryRequest, DeliveryRoundView, WebhookActivities } from '../definitions.ts';
import { decideAfterAttempt } from './delivery-queue.ts';

export interface AttemptRound {
  request: DeliveryRequest;
  webhookId: string;
  retryScale: number;
}

/**
 * One round of attempts of one delivery, shared by both delivery workflows: an attempt, the decision on its
 * outcome (written by `settleWebhookDelivery` when it settles the delivery), then the retry schedule's durable
 * timer, until the decision is done. `show` receives the attempt in progress or waiting for its timer, for the
 * workflows' queries. The commands, and their order, are those both workflows' recorded histories hold.
 */
export async function runAttemptRound(
  activities: Pick<WebhookActivities, 'attemptWebhookDelivery' | 'settleWebhookDelivery'>,
  { request, webhookId, retryScale }: AttemptRound,
  show: (current: NonNullable<DeliveryRoundView>) => void,
): Promise<void> {
  const { deliveryId } = request;
  for (let attemptNumber = request.firstAttempt; ; attemptNumber++) {
    const current: NonNullable<DeliveryRoundView> = { deliveryId, attemptNumber, nextAttemptAt: null };
    show(current);
    const outcome = await activities.attemptWebhookDelivery({ deliveryId, attemptNumber });
    const decision = decideAfterAttempt({ outcome, request, attemptNumber, retryScale, nowMs: Date.now() });
    if (decision.settlement) {
      await activities.settleWebhookDelivery({ deliveryId, webhookId, settlement: decision.settlement });
    }
    if (decision.kind === 'done') return;
    show({ ...current, nextAttemptAt: new Date(Date.now() + decision.delayMs).toISOString() });
    await sleep(decision.delayMs);
  }
}
