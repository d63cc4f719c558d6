import { setHandler } from '@temporalio/workflow';
import {
  actionRecordedSignal,
  approvalStatusQuery,
  delegateUpdate,
  remindUpdate,
  retryFinalizationUpdate,
  voidUpdate,
  type ApprovalView,
  type DelegateInput,
  type ApprovalWorkflowInput,
} from '../definitions.ts';
import { ApprovalRun } from './approval-run.ts';

/**
 * One document's approval (workflow type `documentApproval`): notifies approvers over WhatsApp (one at a time,
 * by signing group, or all at once), follows their actions (decided and recorded by the API in PostgreSQL, then
 * signalled), takes delegations, a void and reminders as updates, expires on a durable timer, and hands a fully
 * approved document to finalization. Every other read-model write is an activity, conditional on the document's
 * row where an action could race it (the void, the expiry). No path ends in a failed workflow: every activity has a finite policy whose exhaustion leads
 * to a state someone can see (`attention`, `finalization.state = "failed"`).
 *
 * Each run stays on the worker version that started it (pinned, docs/operations.md, "Upgrading workflow code"), so a
 * change to this code needs no `patched()`: it is a new version, and runs of the previous one finish there.
 */
export async function documentApproval(input: ApprovalWorkflowInput): Promise<ApprovalView> {
  const run = new ApprovalRun(input);
  setHandler(approvalStatusQuery, () => run.view());
  setHandler(actionRecordedSignal, (action) => run.follow(action));
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
