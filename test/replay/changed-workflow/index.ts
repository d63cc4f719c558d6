import { sleep } from '@temporalio/workflow';
import type { ApprovalWorkflowInput } from '../../../src/features/approval/definitions.ts';
import { approvalWorkflow as current } from '../../../src/features/approval/workflow/legacy/approval-workflow.ts';

/**
 * The approval workflow with one incompatible change (a timer before anything else), the kind of edit that
 * breaks running workflows. Replaying the committed histories against it must fail: that proves the replay
 * test can fail.
 */
export async function approvalWorkflow(input: ApprovalWorkflowInput) {
  await sleep('1 second');
  return current(input);
}
