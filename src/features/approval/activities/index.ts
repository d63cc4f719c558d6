import type { ApprovalActivities } from '../definitions.ts';
import { documentEvents } from '../../events/document-events.ts';
import { withHistorySafeFailures } from '../history-safe.ts';
import { actionActivities } from './actions.ts';
import type { ActivityContext, ApprovalActivityDeps } from './context.ts';
import { eventActivities } from './events.ts';
import { finalizeActivities } from './finalize.ts';
import { notifyActivities, notifyEach } from './notify.ts';

export { type ApprovalActivityDeps, DEFAULT_APPROVAL_POLICIES } from './context.ts';
export { activityWorkflowRun, type WorkflowRun } from './workflow-run.ts';

/**
 * The approval workflow's side effects, by concern: the document's own states (events), the approvers' messages
 * (notify), their actions and delegations (actions), the signed PDF and its copies (finalize). Each one is
 * idempotent: its writes are guarded by the state they move from, and its events are keyed, so a retry (or a
 * replay after a crash) changes nothing the second time.
 */
export function createApprovalActivities(deps: ApprovalActivityDeps): ApprovalActivities {
  const ctx: ActivityContext = { deps, events: documentEvents(deps) };
  const finalize = finalizeActivities(ctx);
  const activities: ApprovalActivities = {
    ...eventActivities(ctx, (notices, loaded) => notifyEach(ctx, notices, loaded)),
    ...notifyActivities(ctx),
    ...actionActivities(ctx, finalize),
    ...finalize,
  };
  // A failure naming an approver (WhatsApp's answer may name the number) is redacted before Temporal keeps it.
  return withHistorySafeFailures(deps.db, activities);
}
