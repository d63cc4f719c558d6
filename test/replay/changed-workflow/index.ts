import { sleep } from '@temporalio/workflow';
import type { ApprovalWorkflowInput } from '../../../src/features/approval/definitions.ts';
import { documentApproval as currentRun } from '../../../src/features/approval/workflow/document-approval.ts';
import { approvalWorkflow as legacy } from '../../../src/features/approval/workflow/legacy/approval-workflow.ts';

/**
 * Both approval workflows with one incompatible change (a timer before anything else), the kind of edit that
 * breaks running workflows. Replaying the committed histories against it must fail: that proves the replay
 * test can fail, for the legacy type and for the current one.
 */
export async function approvalWorkflow(input: ApprovalWorkflowInput) {
  await sleep('1 second');
  return legacy(input);
}

export async function documentApproval(input: ApprovalWorkflowInput) {
  await sleep('1 second');
  return currentRun(input);
}
