import {
  ActivityFailure,
  ApplicationFailure,
  isCancellation,
  proxyActivities,
  proxyLocalActivities,
  type ActivityOptions,
} from '@temporalio/workflow';
import { RetryState } from '@temporalio/common';
import type { ApprovalActivities, ApprovalPolicies } from '../definitions.ts';

/**
 * How the approval workflow reaches its activities: which run as local activities (a marker in the workflow task
 * that asked, no activity task and no workflow task of their own) and which as ordinary ones, and on which retry
 * policy. Each policy ends at its schedule-to-close time-out, read from the worker's config once per run
 * (`ApprovalPolicies`, APPROVAL_*_RETRY_SECONDS), so every failure that lasts becomes a state someone can see.
 */

/** The notifications' policy (approval requests, reminders, voided notices, signed copies). */
export const NOTIFY_POLICY = {
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '5 minutes' },
} as const satisfies ActivityOptions;
/** The read-model writes' policy (PostgreSQL transactions, no outside call). */
export const WRITE_POLICY = NOTIFY_POLICY;
export const FINALIZE_POLICY = {
  startToCloseTimeout: '10 minutes',
  // The activity heartbeats while it works: a worker killed mid-way is noticed within this, not 10 minutes. The
  // run's policies may set another (APPROVAL_FINALIZE_HEARTBEAT_SECONDS); runs started before they could keep this.
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '10 minutes' },
} as const satisfies ActivityOptions;

/** A local activity that would hold its workflow task (and an update it answers) up longer than this is not one. */
const LOCAL_NOTICE_TIMEOUT = '10 seconds';

/** The policies, the send and the first requests: a few attempts in the first workflow task. */
export const beginLocally = proxyLocalActivities<ApprovalActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumAttempts: 3 },
});
/** Read once per run when beginApproval could not be: the answer is kept in the history. */
export const policiesLocally = proxyLocalActivities<ApprovalActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});
/** The requests due at one moment, once each, side by side; one that fails goes again on its own. */
export const batchLocally = proxyLocalActivities<ApprovalActivities>({
  startToCloseTimeout: LOCAL_NOTICE_TIMEOUT,
  retry: { maximumAttempts: 1 },
});
const writesLocally = proxyLocalActivities<ApprovalActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumAttempts: 3 },
});
const requestsLocally = proxyLocalActivities<ApprovalActivities>({
  startToCloseTimeout: LOCAL_NOTICE_TIMEOUT,
  retry: { maximumAttempts: 1 },
});
/**
 * The finalization's first attempt, in the workflow task of the last action: a document takes 0.1-0.3 s to compose
 * and sign. Long enough that the signed copies still get their share of it (COPIES_MIN_BUDGET_MS in
 * activities/finalize.ts) after a slow signature; a task held this long is kept alive by the SDK's workflow-task
 * heartbeat. The attempt takes a PDF thread only soon (FinalizeSlot: admitted before its reads, behind at most
 * SOON_ROUNDS rounds), so it never waits long in the queue.
 */
const finalizeLocally = proxyLocalActivities<ApprovalActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 1 },
});

/**
 * `local` first; when its attempts fail, the same call as the ordinary activity `remote`, on its whole policy. A
 * failure the activity marked non-retryable (a permanent cause: a tampered original, a certificate revoked) is the
 * call's failure at once, as the ordinary activity's would be (an ActivityFailure, its cause the activity's): the
 * ordinary activity would fail the same way, and an operator would see it twice in the failure metrics.
 */
function localFirst<I, O>(
  activityType: keyof ApprovalActivities,
  local: (input: I) => Promise<O>,
  remote: (input: I) => Promise<O>,
) {
  return async (input: I): Promise<O> => {
    try {
      return await local(input);
    } catch (err) {
      if (isCancellation(err)) throw err;
      // A local activity's failure reaches the workflow as the activity's own error, not wrapped.
      if (err instanceof ApplicationFailure && err.nonRetryable === true)
        throw new ActivityFailure(
          'Local activity task failed',
          activityType,
          undefined,
          RetryState.NON_RETRYABLE_FAILURE,
          undefined,
          err,
        );
      return remote(input);
    }
  };
}

export type LocalWrites = Pick<
  ApprovalActivities,
  'markDocumentSent' | 'closeDocument' | 'markFinalizationFailed' | 'recordNotificationFailure'
>;

/** The activities of one run, on the policies the worker's config gave it. */
export interface ApprovalEffects {
  policies: ApprovalPolicies;
  /**
   * The writes an update handler schedules (a delegation, a void), as
   * ordinary activities: the workflow task that accepts the update schedules them, so the acceptance is in the
   * history before anything outside the workflow changes.
   */
  writes: ApprovalActivities;
  /** The other read-model writes: local attempts first, then the ordinary activity. */
  localWrites: LocalWrites;
  /** Notifications on the notify policy (reminders, voided notices, a request retried on its own). */
  notices: ApprovalActivities;
  /** An approval request: one local attempt, then `notices.notifyApprover` (same idempotency key: sent once). */
  request: ApprovalActivities['notifyApprover'];
  /**
   * The finalization and the signed copies: one local attempt, then the ordinary activity on its policy, ending
   * after `ms` (heartbeating, so a worker that dies mid-way is noticed).
   */
  finalize(ms: number): ApprovalActivities['finalizeAndSendSignedCopies'];
}

export function approvalEffects(policies: ApprovalPolicies): ApprovalEffects {
  const writes = proxyActivities<ApprovalActivities>({
    ...WRITE_POLICY,
    scheduleToCloseTimeout: policies.writeMs,
  });
  const notices = proxyActivities<ApprovalActivities>({
    ...NOTIFY_POLICY,
    scheduleToCloseTimeout: policies.notifyMs,
  });
  return {
    policies,
    writes,
    localWrites: {
      markDocumentSent: localFirst(
        'markDocumentSent',
        writesLocally.markDocumentSent,
        writes.markDocumentSent,
      ),
      closeDocument: localFirst('closeDocument', writesLocally.closeDocument, writes.closeDocument),
      markFinalizationFailed: localFirst(
        'markFinalizationFailed',
        writesLocally.markFinalizationFailed,
        writes.markFinalizationFailed,
      ),
      recordNotificationFailure: localFirst(
        'recordNotificationFailure',
        writesLocally.recordNotificationFailure,
        writes.recordNotificationFailure,
      ),
    },
    notices,
    request: localFirst('notifyApprover', requestsLocally.notifyApprover, notices.notifyApprover),
    finalize: (ms) =>
      localFirst(
        'finalizeAndSendSignedCopies',
        finalizeLocally.finalizeAndSendSignedCopies,
        proxyActivities<ApprovalActivities>({
          ...FINALIZE_POLICY,
          heartbeatTimeout: policies.finalizeHeartbeatMs ?? FINALIZE_POLICY.heartbeatTimeout,
          scheduleToCloseTimeout: ms,
        }).finalizeAndSendSignedCopies,
      ),
  };
}
