import {
  ApplicationFailure,
  allHandlersFinished,
  condition,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { DocumentStatusKey } from '../../temporal/search-attributes.ts';
import {
  acceptsActions,
  allCompleted,
  applyExpiry,
  createApprovalState,
  decideAction,
  decideRemind,
  decideVoid,
  dueForNotification,
  markApproved,
  markNotified,
  notifiedApprovers,
  progress,
  type ApprovalState,
} from './approval-state.ts';
import {
  actUpdate,
  approvalStatusQuery,
  remindUpdate,
  REFUSAL_MESSAGES,
  sentUpdate,
  voidUpdate,
  type ActInput,
  type ApprovalActivities,
  type ApprovalView,
  type ApprovalWorkflowInput,
  type Refusal,
  type WorkflowNoticeKind,
} from '../definitions.ts';

const activities = proxyActivities<ApprovalActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '5 minutes' },
});

const finalization = proxyActivities<ApprovalActivities>({
  startToCloseTimeout: '10 minutes',
  // The activity heartbeats while it works: a worker killed mid-way is noticed within this, not 10 minutes.
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '10 minutes' },
});

function refuse(refusal: Refusal): never {
  throw ApplicationFailure.create({ type: refusal, message: REFUSAL_MESSAGES[refusal], nonRetryable: true });
}

/**
 * One document's approval, from send to a terminal state: notifies approvers over WhatsApp (sequentially or all
 * at once), takes their actions as updates, expires on a durable timer, and hands a fully approved document to
 * finalization. The PostgreSQL read model is written by activities only; an update returns after its write.
 */
export async function approvalWorkflow(input: ApprovalWorkflowInput): Promise<ApprovalView> {
  let state: ApprovalState = createApprovalState(input.workflowType, input.approvers);
  let sentRecorded = false;
  let writesInFlight = 0;
  const { workflowId } = workflowInfo();

  const view = (): ApprovalView => ({
    status: state.status,
    finalizing: allCompleted(state) && state.status === 'in_progress',
    ...progress(state),
    approvers: state.approvers.map((a) => ({ id: a.id, orderIndex: a.orderIndex, state: a.state })),
  });
  const publishStatus = () =>
    upsertSearchAttributes([{ key: DocumentStatusKey, value: state.status }] as never);

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
  setHandler(sentUpdate, async () => {
    await condition(() => sentRecorded);
    return view();
  });

  setHandler(
    actUpdate,
    async ({ approverId, kind, evidence }) => {
      const decision = decideAction(state, approverId, kind);
      if (!decision.accepted) refuse(decision.refusal); // validated already; the state cannot have moved since
      state = decision.next;
      publishStatus();
      await write(() =>
        activities.recordApproverAction({ documentId: input.documentId, approverId, kind, evidence }),
      );
      return view();
    },
    {
      validator: ({ approverId, kind }: ActInput) => {
        const decision = decideAction(state, approverId, kind);
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
      await write(() => activities.markDocumentVoided({ documentId: input.documentId, at }));
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
      const result = await activities.notifyApprover({
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

  const notify = (approverIds: string[], kind: WorkflowNoticeKind) =>
    Promise.all(
      approverIds.map((approverId) =>
        activities.notifyApprover({
          documentId: input.documentId,
          approverId,
          kind,
          idempotencyKey: `${workflowId}:${approverId}:${kind}`,
        }),
      ),
    );

  await activities.markDocumentSent({ documentId: input.documentId, workflowId });
  sentRecorded = true;
  publishStatus();

  const deadline = Date.parse(input.expiresAt);
  for (;;) {
    const due = dueForNotification(state).map((a) => a.id);
    if (due.length) {
      await notify(due, 'approval_request');
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

  // Handlers' writes land before anything that reads them (finalization reads every approver's evidence).
  await condition(() => writesInFlight === 0);
  if (allCompleted(state) && state.status === 'in_progress') {
    await finalization.finalizeApprovedDocument({ documentId: input.documentId });
    state = markApproved(state);
    publishStatus();
  } else if (state.status === 'voided') {
    await notify(
      notifiedApprovers(state).map((a) => a.id),
      'voided',
    );
  }
  await condition(allHandlersFinished);
  return view();
}
