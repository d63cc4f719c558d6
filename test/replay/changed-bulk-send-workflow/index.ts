import { sleep } from '@temporalio/workflow';
import type { BulkSendWorkflowInput } from '../../../src/features/bulk-sends/definitions.ts';
import { bulkSendWorkflow as current } from '../../../src/features/bulk-sends/workflow/bulk-send-workflow.ts';

/**
 * The bulk-send workflow with one incompatible change (a timer before anything else). Replaying the committed
 * histories against it must fail: that proves the replay test can fail.
 */
export async function bulkSendWorkflow(input: BulkSendWorkflowInput) {
  await sleep('1 second');
  return current(input);
}
