/**
 * The approval workflow as it ran before Worker Versioning, frozen with everything of ours it imports (this
 * folder). It is registered under its original type name, `approvalWorkflow`, because runs started before
 * versioning are handed by Temporal to whichever worker version is current at their next workflow task: that
 * version must replay their histories, so this code may never change — every command it issues is recorded in
 * them, and each `patched()` branch below is a path some of them took (test/histories/ v1–v9 replay through it).
 * New documents start `documentApproval` (../document-approval.ts), which has no patches at all.
 * Being frozen, this folder is exempt from the house limits of 400 lines a file and 80 a function: it is kept as
 * it ran, not reshaped.
 *
 * Delete this folder, its export in src/workflows/index.ts and the histories it replays once no run of type
 * `approvalWorkflow` is open: `npm run cli -- workers status` reports `legacyOpenRuns: 0` (the same as
 * `temporal workflow count --query 'WorkflowType="approvalWorkflow" AND ExecutionStatus="Running"'`).
 */
import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  allHandlersFinished,
  condition,
  isCancellation,
  log,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  sleep,
  upsertSearchAttributes,
  workflowInfo,
  type ActivityOptions,
} from '@temporalio/workflow';
import { ApprovalAttentionKey, DocumentStatusKey } from './search-attributes.ts';
import {
  acceptsActions,
  allCompleted,
  applyExpiry,
  createApprovalState,
  decideAction,
  decideDelegation,
  decideRemind,
  decideRetryFinalization,
  decideVoid,
  dueForNotification,
  finalizationFailed,
  markApproved,
  markFinalizationFailed,
  markNotified,
  notifiedApprovers,
  progress,
  type ApprovalState,
} from './approval-state.ts';
import { expiryNoticeTime, reminderTimes } from './reminder-schedule.ts';
import { hasSharedPositions } from './rules.ts';
import {
  actUpdate,
  approvalStatusQuery,
  delegateUpdate,
  remindUpdate,
  REFUSAL_MESSAGES,
  retryFinalizationUpdate,
  sentUpdate,
  voidUpdate,
  type ActInput,
  type ApprovalActivities,
  type ApprovalPolicies,
  type ApprovalView,
  type ApprovalWorkflowInput,
  type Attention,
  type BatchedNoticeResult,
  type FinalizeWithCopiesResult,
  type NotifyApproverInput,
  type NotifyApproverResult,
  type RecordActionInput,
  type DelegateInput,
  type Refusal,
  type WorkflowNoticeKind,
} from './definitions.ts';

/**
 * The patches a run of this workflow may have taken, oldest first (its history holds the marker of each):
 * `recovery` finite retry policies and parking in `attention`; `finalizationRecovery` a failed finalization waits
 * for a retry or a void; `signedCopies` the signed PDF to every approver; `autoReminders` durable reminder timers;
 * `signingGroups` approvers sharing an order_index notified together; `delegation` the `delegate` update;
 * `lean` .. `leanV4` fewer Temporal tasks per document, each replacing the one before; `leanV5` all of them and one
 * activity where two followed each other (a new run of this type asked only it); `delegateRequest` a delegate's
 * request as an ordinary activity.
 */
export const PATCHES = {
  recovery: 'approval-recovery-v1',
  finalizationRecovery: 'approval-finalization-recovery-v1',
  signedCopies: 'approval-signed-copies-v1',
  autoReminders: 'approval-auto-reminders-v1',
  signingGroups: 'approval-signing-groups-v1',
  delegation: 'approval-delegation-v1',
  lean: 'approval-lean-v1',
  leanV2: 'approval-lean-v2',
  leanV3: 'approval-lean-v3',
  leanV4: 'approval-lean-v4',
  leanV5: 'approval-lean-v5',
  delegateRequest: 'approval-delegate-request-v1',
} as const;

/** The policies before `recovery` (retried without end). */
const legacyActivities = proxyActivities<ApprovalActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '5 minutes' },
});
const legacyFinalization = proxyActivities<ApprovalActivities>({
  startToCloseTimeout: '10 minutes',
  // The activity heartbeats while it works: a worker killed mid-way is noticed within this, not 10 minutes.
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '10 minutes' },
});

/** Reads the worker's APPROVAL_*_RETRY_SECONDS once per workflow; the answer is kept in the history. */
const local = proxyLocalActivities<ApprovalActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

/** The named retry policies; each one ends at its schedule-to-close time-out (from the worker's config). */
export const NOTIFY_POLICY = {
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '5 minutes' },
} as const satisfies ActivityOptions;
export const WRITE_POLICY = NOTIFY_POLICY;
export const FINALIZE_POLICY = {
  startToCloseTimeout: '10 minutes',
  // The activity heartbeats while it works: a worker killed mid-way is noticed within this, not 10 minutes.
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '10 minutes' },
} as const satisfies ActivityOptions;

/** The read-model writes `approval-lean-v1` runs as local activities first. */
const LEAN_WRITES = [
  'markDocumentSent',
  'recordApproverAction',
  'markDocumentVoided',
  'markDocumentExpired',
  'markFinalizationFailed',
  'recordNotificationFailure',
] as const;

/**
 * From `approval-lean-v1`: the read-model writes (PostgreSQL transactions, no outside call) as local activities —
 * a marker in the workflow task that asked, instead of an activity task and a workflow task of its own. A write
 * whose local attempts all fail (a few, seconds apart) is handed to the ordinary activity on the write policy, so
 * one that fails for good still parks the workflow as before (`durably`).
 */
function leanWrites(p: ApprovalPolicies): ReturnType<typeof proxyActivities<ApprovalActivities>> {
  const locally = proxyLocalActivities<ApprovalActivities>({
    startToCloseTimeout: '1 minute',
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumAttempts: 3 },
  });
  const remote = proxyActivities<ApprovalActivities>({ ...WRITE_POLICY, scheduleToCloseTimeout: p.writeMs });
  const writes = new Map<string, (input: unknown) => Promise<void>>();
  for (const name of LEAN_WRITES) {
    const local = locally[name] as (input: unknown) => Promise<void>;
    const fallback = remote[name] as (input: unknown) => Promise<void>;
    writes.set(name, async (input: unknown) => {
      try {
        return await local(input);
      } catch (err) {
        if (isCancellation(err)) throw err;
        return fallback(input);
      }
    });
  }
  // Any other activity through this proxy is the ordinary one.
  return new Proxy(remote, {
    get: (target, name, receiver) =>
      (typeof name === 'string' && writes.get(name)) || (Reflect.get(target, name, receiver) as unknown),
  });
}

/**
 * From `approval-lean-v2`: an approval request as a local activity — one attempt of at most
 * LEAN_NOTICE_TIMEOUT in the workflow task that asked (so that task, and an update it answers, waits for it no
 * longer than that) — then, when it fails, the ordinary `notifyApprover` on the notify policy, which retries it
 * (same idempotency key: a notice WhatsApp accepted is never sent twice; see sendNotice). The workflow learns the
 * result without an activity task and the workflow task that follows one.
 */
const LEAN_NOTICE_TIMEOUT = '10 seconds';
function leanNotices(p: ApprovalPolicies): ReturnType<typeof proxyActivities<ApprovalActivities>> {
  const locally = proxyLocalActivities<ApprovalActivities>({
    startToCloseTimeout: LEAN_NOTICE_TIMEOUT,
    retry: { maximumAttempts: 1 },
  });
  const remote = proxyActivities<ApprovalActivities>({
    ...NOTIFY_POLICY,
    scheduleToCloseTimeout: p.notifyMs,
  });
  const notifyApprover: ApprovalActivities['notifyApprover'] = async (input) => {
    try {
      return await locally.notifyApprover(input);
    } catch (err) {
      if (isCancellation(err)) throw err;
      return remote.notifyApprover(input);
    }
  };
  return new Proxy(remote, {
    get: (target, name, receiver) =>
      name === 'notifyApprover' ? notifyApprover : (Reflect.get(target, name, receiver) as unknown),
  });
}

/**
 * From `approval-lean-v5`: the local activities that do two things at once. `beginApproval` has the attempts of
 * a lean write (a failure falls back to approvalPolicies and markDocumentSent, each as before); `notifyApprovers`
 * one attempt, as a lean approval request (a request it could not send is then retried alone, as before).
 */
const beginLocally = proxyLocalActivities<ApprovalActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumAttempts: 3 },
});
const batchLocally = proxyLocalActivities<ApprovalActivities>({
  startToCloseTimeout: LEAN_NOTICE_TIMEOUT,
  retry: { maximumAttempts: 1 },
});

function refuse(refusal: Refusal): never {
  throw ApplicationFailure.create({ type: refusal, message: REFUSAL_MESSAGES[refusal], nonRetryable: true });
}

/** The innermost message of an activity's failure (its last attempt's error, under a time-out). */
function failureMessage(err: unknown): string {
  let message = err instanceof Error ? err.message : String(err);
  for (let e: unknown = err; e instanceof Error; e = e.cause) if (e.message) message = e.message;
  return message;
}

/**
 * One document's approval, from send to a terminal state: notifies approvers over WhatsApp (sequentially or all
 * at once), takes their actions as updates, expires on a durable timer, and hands a fully approved document to
 * finalization. The PostgreSQL read model is written by activities only; an update returns after its write.
 * No path ends in a failed workflow: every activity has a finite policy whose exhaustion leads to a defined state.
 */
export async function approvalWorkflow(input: ApprovalWorkflowInput): Promise<ApprovalView> {
  let state: ApprovalState = createApprovalState(input.workflowType, input.approvers, {
    allowDelegation: input.allowDelegation === true,
  });
  /** Delegates whose row recordDelegation has not written yet: they are notified once it has. */
  const held = new Set<string>();
  /** The delegates this run accepted (the `delegate` update): asked apart (approval-delegate-request-v1). */
  const delegates = new Set<string>();
  let sentRecorded = false;
  let writesInFlight = 0;
  /** From `approval-lean-v5`: the accepted actions (not rejections) whose own write is in flight, by approver. */
  const actionsInFlight = new Map<string, RecordActionInput>();
  const { workflowId } = workflowInfo();

  let policies: ApprovalPolicies | undefined;
  const loadPolicies = async (): Promise<ApprovalPolicies> => (policies ??= await local.approvalPolicies());
  // Set below, after the handlers: an update sent with the start (`sent`) must find its handler registered.
  let recovery = false;
  /** A write that exhausts its policy parks the workflow (from either patch on); before them it failed it. */
  let parking = false;
  let activities = legacyActivities;
  let notices = legacyActivities;

  let attention: Attention | null = null;
  /** From `approval-lean-v1`: the finalization's own activity sent the signed copies (or they were refused). */
  let copiesSettled = false;
  let retries = 0; // counts operator retries of a parked write
  const view = (): ApprovalView => ({
    status: state.status,
    finalizing: allCompleted(state) && state.status === 'in_progress',
    ...progress(state),
    approvers: state.approvers.map((a) => ({ id: a.id, orderIndex: a.orderIndex, state: a.state })),
    finalizationFailure: state.finalizationFailure ?? null,
    attention,
  });
  /** From `approval-lean-v1`: the status last published (the start's), so an unchanged one is not upserted. */
  let lean = false;
  /**
   * From `approval-lean-v2`: the writes an update handler runs when it closes the document (a rejection, a void),
   * as ordinary activities. A local activity would run inside the workflow task that accepts the update, and the
   * workflow then completes in that same task; when any event arrives meanwhile (say the cancelled approval
   * request's activity finishing), Temporal refuses the completion (UNHANDLED_COMMAND) and aborts the update it
   * had not yet seen accepted ("unexpected workflow task failure", FAILED_PRECONDITION to the caller) — after the
   * local activity had already written the action to the read model. With an activity task between them, the
   * acceptance is recorded in a task of its own before the workflow can complete.
   */
  let closingWrites = legacyActivities;
  /** From `approval-lean-v3`: updates accepted whose acceptance is not yet known to be in the history. */
  let barrier = false;
  let unconfirmed = 0;
  /** From `approval-lean-v4`: an accepted action's write is the ordinary activity, not a timer and a local one. */
  let ordinaryActs = false;
  /** From `approval-lean-v5` (see PATCHES): no other patch asked; fewer activities where two followed each other. */
  let leanV5 = false;
  const requestOf = (approverId: string): NotifyApproverInput => ({
    documentId: input.documentId,
    approverId,
    kind: 'approval_request',
    idempotencyKey: `${workflowId}:${approverId}:approval_request`,
  });
  /**
   * From `approval-lean-v5`: approval requests already sent by the activity that also did something else
   * (beginApproval, recordActionAndNotify), by approver; the main loop takes each one's outcome from here.
   */
  const carried = new Map<string, BatchedNoticeResult>();
  /**
   * Waits until the update being handled is accepted in the history: a timer started in the workflow task that
   * accepts it can only fire once that task's completion (the acceptance with it) is recorded. Should the task fail
   * instead, the update is aborted with it and this handler never ran, as far as the history knows: it must not
   * have touched anything outside the workflow before this returns.
   */
  const acceptanceRecorded = async () => {
    if (!barrier) return;
    unconfirmed++;
    try {
      await sleep(1);
    } finally {
      unconfirmed--;
    }
  };
  /**
   * Runs the write of an accepted `act` or `delegate`, no earlier than its acceptance is in the history:
   * from `approval-lean-v4` the write is an ordinary activity (`writes` is then `closingWrites`), scheduled by
   * the task that accepts the update, and nobody is asked until it has settled; under `approval-lean-v3`, after
   * `acceptanceRecorded`.
   */
  const afterAcceptance = async (run: () => Promise<void>) => {
    if (!ordinaryActs) {
      await acceptanceRecorded();
      return run();
    }
    unconfirmed++;
    try {
      await run();
    } finally {
      unconfirmed--;
    }
  };
  let publishedStatus: unknown;
  const publishStatus = () => {
    if (lean) {
      if (state.status === publishedStatus) return;
      publishedStatus = state.status;
    }
    upsertSearchAttributes([{ key: DocumentStatusKey, value: state.status }] as never);
  };
  const publishAttention = (value: string | null) =>
    upsertSearchAttributes([{ key: ApprovalAttentionKey, value }] as never);

  /**
   * Runs a read-model write; when it exhausts its policy, the workflow parks in `attention` (query, search
   * attribute ApprovalAttention, an error log) until an operator's `retryFinalization`, then tries again.
   */
  const durably = async <T>(name: string, run: () => Promise<T>): Promise<T> => {
    for (;;) {
      try {
        return await run();
      } catch (err) {
        if (!parking || !(err instanceof ActivityFailure)) throw err;
        attention = { activity: name, error: failureMessage(err), since: new Date().toISOString() };
        log.error('approval workflow parked: a read-model write exhausted its retry policy', {
          documentId: input.documentId,
          ...attention,
        });
        publishAttention(name);
        const seen = retries;
        await condition(() => retries !== seen);
        attention = null;
        publishAttention(state.finalizationFailure ? 'finalization' : null);
      }
    }
  };

  /** Runs a read-model write started by an update handler; the main loop waits for these before finishing. */
  const write = async (run: () => Promise<void>) => {
    writesInFlight++;
    try {
      await run();
    } finally {
      writesInFlight--;
    }
  };

  setHandler(approvalStatusQuery, view);
  // No longer asked by this code's API (a send's answer reads document.sent from PostgreSQL); kept for an API of
  // an earlier deploy that still asks it during a rolling upgrade.
  setHandler(sentUpdate, async () => {
    await condition(() => sentRecorded);
    return view();
  });

  setHandler(
    actUpdate,
    async ({ approverId, kind, evidenceId, evidence }) => {
      const decision = decideAction(state, approverId, kind);
      if (!decision.accepted) refuse(decision.refusal); // validated already; the state cannot have moved since
      const dueBefore = new Set(dueForNotification(state).map((a) => a.id));
      state = decision.next;
      publishStatus();
      // The evidence by reference (its row in PostgreSQL); inline only in the oldest runs' updates.
      const action =
        evidenceId === undefined
          ? { documentId: input.documentId, approverId, kind, evidence }
          : { documentId: input.documentId, approverId, kind, evidenceId };
      // A rejection's write is an ordinary activity (closingWrites): it runs once the acceptance is recorded.
      const closing = kind === 'reject';
      const writes = closing || ordinaryActs ? closingWrites : activities;
      const record = () => durably('recordApproverAction', () => writes.recordApproverAction(action));
      if (leanV5 && !closing) {
        // The action that completes the document also finalizes it, when the only writes still in flight are
        // other actions' (finalization reads every approver's evidence: the activity writes those first too).
        if (allCompleted(state) && writesInFlight === actionsInFlight.size) {
          const actions = [...actionsInFlight.values(), action];
          await write(() => recordAndFinalize(actions, record));
          return view();
        }
        // The approvers the action made due (a sequential document's next) are asked by the write's own activity,
        // after the write.
        const madeDue = dueForNotification(state)
          .map((a) => a.id)
          .filter((id) => !dueBefore.has(id) && !held.has(id));
        actionsInFlight.set(approverId, action);
        try {
          await write(() =>
            afterAcceptance(() => (madeDue.length ? recordAndNotify(action, madeDue, record) : record())),
          );
        } finally {
          actionsInFlight.delete(approverId);
        }
        return view();
      }
      await write(() => (closing ? record() : afterAcceptance(record)));
      return view();
    },
    {
      validator: ({ approverId, kind, evidenceId, evidence }: ActInput) => {
        if (typeof evidenceId !== 'string' && !evidence) {
          throw ApplicationFailure.create({
            type: 'invalid_action',
            message: 'An action needs the id of its stored evidence (evidenceId)',
            nonRetryable: true,
          });
        }
        const decision = decideAction(state, approverId, kind);
        if (!decision.accepted) refuse(decision.refusal);
      },
    },
  );

  setHandler(
    delegateUpdate,
    async ({ approverId, delegateId, delegationId }) => {
      const decision = decideDelegation(state, approverId, delegateId);
      if (!decision.accepted) refuse(decision.refusal); // validated already; the state cannot have moved since
      if (!leanV5) patched(PATCHES.delegation);
      held.add(delegateId);
      delegates.add(delegateId);
      state = decision.next;
      try {
        await write(() =>
          afterAcceptance(() =>
            durably('recordDelegation', () =>
              activities.recordDelegation({
                documentId: input.documentId,
                approverId,
                delegateId,
                delegationId,
              }),
            ),
          ),
        );
      } finally {
        held.delete(delegateId);
      }
      return view();
    },
    {
      validator: ({ approverId, delegateId, delegationId }: DelegateInput) => {
        if (typeof delegateId !== 'string' || typeof delegationId !== 'string') {
          throw ApplicationFailure.create({
            type: 'invalid_delegation',
            message: 'A delegation needs the delegate id and the id of its stored row (delegationId)',
            nonRetryable: true,
          });
        }
        const decision = decideDelegation(state, approverId, delegateId);
        if (!decision.accepted) refuse(decision.refusal);
      },
    },
  );

  setHandler(
    voidUpdate,
    async ({ at }) => {
      const decision = decideVoid(state);
      if (!decision.accepted) refuse(decision.refusal);
      state = decision.next;
      publishStatus();
      await write(() =>
        durably('markDocumentVoided', () =>
          closingWrites.markDocumentVoided({ documentId: input.documentId, at }),
        ),
      );
      return view();
    },
    {
      validator: (_input: { at: string }) => {
        const decision = decideVoid(state);
        if (!decision.accepted) refuse(decision.refusal);
      },
    },
  );

  let reminders = 0;
  setHandler(
    remindUpdate,
    async ({ approverId }) => {
      reminders++;
      const result = await notices.notifyApprover({
        documentId: input.documentId,
        approverId,
        kind: 'reminder',
        idempotencyKey: `${workflowId}:${approverId}:reminder:${reminders}`,
      });
      return { wamid: result.wamid };
    },
    {
      validator: ({ approverId }: { approverId: string }) => {
        const refusal = decideRemind(state, approverId);
        if (refusal) refuse(refusal);
      },
    },
  );

  setHandler(
    retryFinalizationUpdate,
    () => {
      if (attention) retries++;
      else {
        const decision = decideRetryFinalization(state);
        if (!decision.accepted) refuse(decision.refusal);
        state = decision.next;
      }
      return view();
    },
    {
      validator: () => {
        if (!attention && !decideRetryFinalization(state).accepted) refuse('nothing_to_retry');
      },
    },
  );

  // A new workflow takes approval-lean-v5, which implies every patch before it; a history recorded without it
  // asks them as the code that recorded it did.
  leanV5 = patched(PATCHES.leanV5);
  recovery = leanV5 || patched(PATCHES.recovery);
  parking = recovery;
  if (
    input.workflowType === 'sequential' &&
    hasSharedPositions(input.approvers) &&
    !leanV5 &&
    !patched(PATCHES.signingGroups)
  ) {
    state = { ...state, oneAtATime: true };
  }
  // Only a workflow started with reminders asks (so histories without them replay unchanged).
  const autoReminders =
    recovery && input.reminders !== undefined && (leanV5 || patched(PATCHES.autoReminders))
      ? input.reminders
      : undefined;
  // A new workflow takes approval-lean-v4 and never asks for v3, v2 or v1; a history recorded with one of those
  // replays through it (each one's marker is asked only where the newer ones are absent).
  ordinaryActs = leanV5 || (recovery && patched(PATCHES.leanV4));
  barrier = !ordinaryActs && recovery && patched(PATCHES.leanV3);
  const leanV2 = ordinaryActs || barrier || (recovery && patched(PATCHES.leanV2));
  lean = leanV2 || (recovery && patched(PATCHES.lean));
  if (lean) publishedStatus = workflowInfo().typedSearchAttributes.get(DocumentStatusKey);
  /** The approval requests: local activities first from approval-lean-v2 (`notices` stays for reminders). */
  let requests = notices;
  /** From approval-lean-v5: the send recorded and the policies read by one local activity. */
  let begun = false;
  if (recovery) {
    if (leanV5) {
      const first = dueForNotification(state).map((a) => a.id);
      try {
        const begin = await beginLocally.beginApproval({
          documentId: input.documentId,
          workflowId,
          notices: first.map(requestOf),
        });
        policies = begin.policies;
        begin.notices.forEach((outcome, i) => carried.set(first[i]!, outcome));
        begun = true;
      } catch (err) {
        if (isCancellation(err)) throw err;
        // Its attempts failed: the policies and the send as before (markDocumentSent is idempotent).
      }
    }
    const p = await loadPolicies();
    const ordinaryWrites = proxyActivities<ApprovalActivities>({
      ...WRITE_POLICY,
      scheduleToCloseTimeout: p.writeMs,
    });
    activities = lean ? leanWrites(p) : ordinaryWrites;
    closingWrites = leanV2 ? ordinaryWrites : activities;
    notices = proxyActivities<ApprovalActivities>({ ...NOTIFY_POLICY, scheduleToCloseTimeout: p.notifyMs });
    requests = leanV2 ? leanNotices(p) : notices;
  } else closingWrites = activities;

  /** Before `recovery`: one batch of notices at a time, awaited (the deadline waited for them). */
  const notifyAll = (approverIds: string[], kind: WorkflowNoticeKind) =>
    Promise.all(
      approverIds.map((approverId) =>
        legacyActivities.notifyApprover({
          documentId: input.documentId,
          approverId,
          kind,
          idempotencyKey: `${workflowId}:${approverId}:${kind}`,
        }),
      ),
    );

  if (!begun) {
    await durably('markDocumentSent', () =>
      activities.markDocumentSent({ documentId: input.documentId, workflowId }),
    );
  }
  sentRecorded = true;
  publishStatus();

  const deadline = Date.parse(input.expiresAt);
  if (recovery) {
    // The deadline timer is armed first and races everything: notices run beside it and are cancelled at expiry.
    let deadlinePassed = false;
    void sleep(Math.max(deadline - Date.now(), 1)).then(() => {
      deadlinePassed = true;
    });
    const noticeScope = new CancellationScope();
    const reminderScope = new CancellationScope();
    /** The approver still owes an action on an open document: their automatic reminders go on. */
    const awaitingAction = (approverId: string) =>
      acceptsActions(state) && state.approvers.some((a) => a.id === approverId && a.state === 'notified');
    /**
     * Durable timers for one approver's automatic reminders, from `notifiedAt` (workflow time): each waits for its
     * moment or for the approver to stop awaiting action (acted, or the document closed), whichever comes first.
     */
    const scheduleReminders = (approverId: string, notifiedAt: number) => {
      if (!autoReminders) return;
      const moments = reminderTimes(autoReminders, notifiedAt, deadline).map((at, i) => ({
        at,
        key: `auto:${i + 1}`,
      }));
      const expiryAt = expiryNoticeTime(autoReminders, notifiedAt, deadline);
      if (expiryAt !== undefined) moments.push({ at: expiryAt, key: 'expires-tomorrow' });
      moments.sort((x, y) => x.at - y.at);
      void reminderScope
        .run(async () => {
          for (const { at, key } of moments) {
            const waitMs = at - Date.now();
            if (waitMs > 0 && (await condition(() => !awaitingAction(approverId), waitMs))) return;
            if (!awaitingAction(approverId)) return;
            try {
              // Through the notify path of `remind`; beyond REMIND_MAX_PER_APPROVER it is skipped, not sent.
              const result = await notices.sendAutomaticReminder({
                documentId: input.documentId,
                approverId,
                kind: 'reminder',
                idempotencyKey: `${workflowId}:${approverId}:reminder:${key}`,
              });
              if (!result.sent)
                log.info('an automatic reminder was not sent', { approverId, key, ...result });
            } catch (err) {
              if (isCancellation(err)) throw err;
              log.warn('an automatic reminder exhausted its retry policy', {
                approverId,
                key,
                error: failureMessage(err),
              });
            }
          }
        })
        .catch((err: unknown) => {
          if (!isCancellation(err)) throw err;
        });
    };
    const notifying = new Set<string>();
    /**
     * From approval-lean-v5: the requests due together in one local activity; each approver's request is its
     * result there, or (it failed, or the batch did) the ordinary notifyApprover on the notify policy.
     */
    const batched = (approverIds: string[]): (() => Promise<NotifyApproverResult>)[] => {
      const inputs = approverIds.map(requestOf);
      const batch = noticeScope.run(() =>
        batchLocally.notifyApprovers({ documentId: input.documentId, notices: inputs }),
      );
      batch.catch(() => undefined); // each approver's request below handles it
      return inputs.map((request, i) => async () => {
        let outcome: BatchedNoticeResult | undefined;
        try {
          outcome = (await batch)[i];
        } catch (err) {
          if (isCancellation(err)) throw err;
        }
        return outcome && 'result' in outcome ? outcome.result : notices.notifyApprover(request);
      });
    };
    /** A request an earlier activity carried: its result, or (it failed there) notifyApprover on its own. */
    const sentAlready = (approverId: string) => {
      const outcome = carried.get(approverId)!;
      carried.delete(approverId);
      return (): Promise<NotifyApproverResult> =>
        'result' in outcome ? Promise.resolve(outcome.result) : notices.notifyApprover(requestOf(approverId));
    };
    const startNotice = (
      approverId: string,
      send = (): Promise<NotifyApproverResult> => requests.notifyApprover(requestOf(approverId)),
    ) => {
      notifying.add(approverId);
      void noticeScope
        .run(async () => {
          try {
            await send();
          } catch (err) {
            if (isCancellation(err)) return;
            // The notice exhausted its policy: recorded on the approver (notification.status "failed"); the
            // approver counts as notified, so POST /approvers/{id}/remind sends it again.
            const error = failureMessage(err);
            log.warn('an approval request exhausted its retry policy', { approverId, error });
            await durably('recordNotificationFailure', () =>
              activities.recordNotificationFailure({
                documentId: input.documentId,
                approverId,
                kind: 'approval_request',
                error,
              }),
            );
          }
          state = markNotified(state, [approverId]);
          scheduleReminders(approverId, Date.now());
        })
        .catch((err: unknown) => {
          if (!isCancellation(err)) throw err;
        })
        .finally(() => notifying.delete(approverId));
    };
    // Nobody is asked while an accepted update's acceptance may still be lost (approval-lean-v3), or while its
    // write has not settled (approval-lean-v4).
    const undispatched = () =>
      unconfirmed > 0 ? [] : dueForNotification(state).filter((a) => !notifying.has(a.id) && !held.has(a.id));
    for (;;) {
      const due = undispatched().map((a) => a.id);
      // The patch is asked only when a delegate of this run is due, so no other history records its marker.
      const apart = due.filter(
        (id) => !carried.has(id) && delegates.has(id) && patched(PATCHES.delegateRequest),
      );
      const fresh = due.filter((id) => !carried.has(id) && !apart.includes(id));
      const sends = leanV5 && fresh.length > 1 ? batched(fresh) : [];
      for (const id of due) {
        startNotice(
          id,
          carried.has(id)
            ? sentAlready(id)
            : apart.includes(id)
              ? () => notices.notifyApprover(requestOf(id)) // never held back by a local activity
              : sends[fresh.indexOf(id)],
        );
      }
      if (!acceptsActions(state)) break;
      await condition(() => deadlinePassed || !acceptsActions(state) || undispatched().length > 0);
      if (deadlinePassed && acceptsActions(state)) {
        state = applyExpiry(state);
        publishStatus();
        noticeScope.cancel();
        await durably('markDocumentExpired', () =>
          activities.markDocumentExpired({ documentId: input.documentId }),
        );
        break;
      }
    }
    noticeScope.cancel(); // the document closed: a request still being retried is moot
    reminderScope.cancel(); // and so are the reminders still to come
  } else {
    for (;;) {
      const due = dueForNotification(state).map((a) => a.id);
      if (due.length) {
        await notifyAll(due, 'approval_request');
        state = markNotified(state, due);
        continue;
      }
      if (!acceptsActions(state)) break;
      const acted = await condition(
        () => !acceptsActions(state) || dueForNotification(state).length > 0,
        Math.max(deadline - Date.now(), 1),
      );
      if (!acted) {
        state = applyExpiry(state);
        if (state.status === 'expired') {
          publishStatus();
          await activities.markDocumentExpired({ documentId: input.documentId });
        }
        break;
      }
    }
  }

  // Handlers' writes land before anything that reads them (finalization reads every approver's evidence).
  await condition(() => writesInFlight === 0);
  if (allCompleted(state) && state.status === 'in_progress') {
    if (recovery || patched(PATCHES.finalizationRecovery)) {
      await finalizeOrPark();
    } else {
      await legacyFinalization.finalizeApprovedDocument({ documentId: input.documentId });
      state = markApproved(state);
      publishStatus();
    }
  }
  if (state.status === 'approved' && (leanV5 || patched(PATCHES.signedCopies)) && !copiesSettled)
    await sendSignedCopies();
  if (state.status === 'voided') {
    // Those notified, and those an action's own activity asked as the document was being voided.
    const told = [
      ...notifiedApprovers(state).map((a) => a.id),
      ...[...carried].flatMap(([id, outcome]) => ('result' in outcome && outcome.result.sent ? [id] : [])),
    ];
    if (recovery) {
      // A voided notice that exhausts its policy is dropped (logged): the document is voided either way.
      await Promise.all(
        told.map((approverId) =>
          notices
            .notifyApprover({
              documentId: input.documentId,
              approverId,
              kind: 'voided',
              idempotencyKey: `${workflowId}:${approverId}:voided`,
            })
            .catch((err: unknown) =>
              log.warn('a voided notice exhausted its retry policy', {
                approverId,
                error: failureMessage(err),
              }),
            ),
        ),
      );
    } else {
      await notifyAll(told, 'voided');
    }
  }
  await condition(allHandlersFinished);
  return view();

  /**
   * The signed PDF to every approver, on the notification policy (APPROVAL_NOTIFY_RETRY_SECONDS). Only ids go in
   * and only counts come back; a copy WhatsApp refuses, or the policy running out, is logged and the document stays
   * approved.
   */
  async function sendSignedCopies(): Promise<void> {
    const p = await loadPolicies();
    const copies = proxyActivities<ApprovalActivities>({
      ...NOTIFY_POLICY,
      scheduleToCloseTimeout: p.notifyMs,
    });
    try {
      const result = await copies.sendSignedCopies({
        documentId: input.documentId,
        idempotencyPrefix: workflowId,
      });
      if (result.failed > 0) log.warn('WhatsApp refused some signed copies', { ...result });
    } catch (err) {
      if (isCancellation(err)) throw err;
      log.warn('the signed copies exhausted their retry policy', { error: failureMessage(err) });
    }
  }

  /** The document is finalized (and, from approval-lean-v1, what became of the signed copies). */
  function approve(result?: FinalizeWithCopiesResult): void {
    if (result) {
      copiesSettled = !result.retryCopies;
      if (result.copies && result.copies.failed > 0)
        log.warn('WhatsApp refused some signed copies', { ...result.copies });
    }
    state = markApproved(state);
    publishStatus();
  }

  /**
   * From approval-lean-v5: the write of an accepted action and the approval requests it made due, in one ordinary
   * activity on the write policy; the requests' outcomes are carried to the main loop, which asks nobody until the
   * write has settled. When it fails, the action is written on its own (`record`) and the requests go as before.
   */
  async function recordAndNotify(
    action: RecordActionInput,
    approverIds: string[],
    record: () => Promise<void>,
  ): Promise<void> {
    try {
      const outcomes = await closingWrites.recordActionAndNotify({
        documentId: input.documentId,
        action,
        notices: approverIds.map(requestOf),
      });
      outcomes.forEach((outcome, i) => carried.set(approverIds[i]!, outcome));
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
      log.warn('an action and the requests it made due did not complete together', {
        error: failureMessage(err),
      });
      await record();
    }
  }

  /**
   * From approval-lean-v5: the write of the action that completes the document (and again, idempotently, of those
   * whose own write is still in flight: `actions`, this one last), and the finalization, in one activity on the
   * finalization's policy, ending at the shorter of the write's and the finalization's windows.
   * When it fails (its failure typed `action_not_written` when the write did, for the operator), the action is
   * written on its own (`record`: a no-op once written; parks as any write that fails for good), and the main
   * path then finalizes as before (finalizeOrPark, with its whole window).
   */
  async function recordAndFinalize(actions: RecordActionInput[], record: () => Promise<void>): Promise<void> {
    const p = await loadPolicies();
    const finalization = proxyActivities<ApprovalActivities>({
      ...FINALIZE_POLICY,
      scheduleToCloseTimeout: Math.min(p.writeMs, p.finalizeMs),
    });
    try {
      approve(
        await finalization.recordActionAndFinalize({
          documentId: input.documentId,
          actions,
          idempotencyPrefix: workflowId,
        }),
      );
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
      log.warn('the last action and the finalization did not complete together', {
        error: failureMessage(err),
      });
      await record();
    }
  }

  /**
   * Finalization with a finite policy: a retryable failure (a signing certificate being fixed, storage) is
   * retried until FINALIZE (APPROVAL_FINALIZE_RETRY_SECONDS) runs out; that or a permanent failure leaves the
   * document `in_progress` with `finalization.state = "failed"` until `retryFinalization` (run again) or a void.
   */
  async function finalizeOrPark(): Promise<void> {
    parking = true;
    let failedOnce = false;
    const p = await loadPolicies();
    const finalization = proxyActivities<ApprovalActivities>({
      ...FINALIZE_POLICY,
      scheduleToCloseTimeout: p.finalizeMs,
    });
    const writes = recovery
      ? activities
      : proxyActivities<ApprovalActivities>({ ...WRITE_POLICY, scheduleToCloseTimeout: p.writeMs });
    for (;;) {
      try {
        if (lean) {
          approve(
            await finalization.finalizeAndSendSignedCopies({
              documentId: input.documentId,
              idempotencyPrefix: workflowId,
            }),
          );
        } else {
          await finalization.finalizeApprovedDocument({ documentId: input.documentId });
          approve();
        }
        if (failedOnce) publishAttention(null);
        return;
      } catch (err) {
        if (!(err instanceof ActivityFailure)) throw err;
        const failure = { error: failureMessage(err), failedAt: new Date().toISOString() };
        state = markFinalizationFailed(state, failure);
        failedOnce = true;
        publishAttention('finalization');
        await durably('markFinalizationFailed', () =>
          writes.markFinalizationFailed({ documentId: input.documentId, ...failure }),
        );
        await condition(() => !finalizationFailed(state));
        if (state.status !== 'in_progress') {
          publishAttention(null);
          return; // voided
        }
      }
    }
  }
}
