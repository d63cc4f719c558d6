import { setHandler } from '@temporalio/workflow';
import {
  actUpdate,
  approvalStatusQuery,
  delegateUpdate,
  remindUpdate,
  retryFinalizationUpdate,
  voidUpdate,
  type ActInput,
  type ApprovalView,
  type DelegateInput,
  type ApprovalWorkflowInput,
} from '../definitions.ts';
import { ApprovalRun } from './approval-run.ts';

/**
 * One document's approval (workflow type `documentApproval`): notifies approvers over WhatsApp (one at a time,
 * by signing group, or all at once), takes their actions, delegations, a void and reminders as updates, expires on
 * a durable timer, and hands a fully approved document to finalization. The PostgreSQL read model is written by
 * activities only. No path ends in a failed workflow: every activity has a finite policy whose exhaustion leads
 * to a state someone can see (`attention`, `finalization.state = "failed"`).
 *
 * Each run stays on the worker version that started it (pinned, docs/operations.md, "Upgrading workflow code"), so a
 * change to this code needs no `patched()`: it is a new version, and runs of the previous one finish there.
 */
export async function documentApproval(input: ApprovalWorkflowInput): Promise<ApprovalView> {
  const run = new ApprovalRun(input);
  setHandler(approvalStatusQuery, () => run.view());
  setHandler(actUpdate, (action) => run.act(action), {
    validator: (action: ActInput) => run.validateAct(action),
  });
  setHandler(delegateUpdate, (delegation) => run.delegate(delegation), {
    validator: (delegation: DelegateInput) => run.validateDelegate(delegation),
  });
  setHandler(voidUpdate, (request) => run.void(request), { validator: (_request) => run.validateVoid() });
  setHandler(remindUpdate, (request) => run.remind(request), {
    validator: (request: { approverId: string }) => run.validateRemind(request),
  });
  setHandler(retryFinalizationUpdate, () => run.retry(), { validator: () => run.validateRetry() });
  return run.run();
}
