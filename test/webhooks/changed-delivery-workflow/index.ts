import { sleep } from '@temporalio/workflow';
import type { WebhookDeliveryWorkflowInput } from '../../../src/features/webhooks/definitions.ts';
import { webhookDeliveryWorkflow as current } from '../../../src/features/webhooks/workflow/delivery-workflow.ts';

/**
 * The delivery workflow with one incompatible change (a timer before anything else). Replaying the committed
 * histories against it must fail: that proves the replay test can fail.
 */
export async function webhookDeliveryWorkflow(input: WebhookDeliveryWorkflowInput) {
  await sleep('1 second');
  return current(input);
}
