import { sleep } from '@temporalio/workflow';
import type { WebhookDeliveryRoundInput } from '../../../src/features/webhooks/definitions.ts';
import { webhookDeliveryRoundWorkflow as current } from '../../../src/features/webhooks/workflow/delivery-round-workflow.ts';

/**
 * The delivery round workflow with one incompatible change (a timer before anything else). Replaying the
 * committed histories against it must fail: that proves the replay test can fail.
 */
export async function webhookDeliveryRoundWorkflow(input: WebhookDeliveryRoundInput) {
  await sleep('1 second');
  return current(input);
}
