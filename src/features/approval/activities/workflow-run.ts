import { Context } from '@temporalio/activity';
import type { Approver } from '../../documents/approvers-store.ts';
import type { Document } from '../../documents/documents-store.ts';
import type { ApprovalWorkflowInput } from '../definitions.ts';

/** The workflow run an activity works for, seen through the worker's own Temporal client. */
export interface WorkflowRun {
  /** What the run was started with (the input of its first history event). */
  input(): Promise<ApprovalWorkflowInput>;
  terminate(reason: string): Promise<void>;
}

/** The run of the activity now executing (call it inside an activity only). */
export function activityWorkflowRun(): WorkflowRun {
  const { client, info } = Context.current();
  if (!info.workflowExecution) throw new Error('activityWorkflowRun: this activity runs outside a workflow');
  const { workflowId, runId } = info.workflowExecution;
  const handle = client.workflow.getHandle(workflowId, runId);
  return {
    async input() {
      const history = await handle.fetchHistory();
      const payload = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
      if (!payload) throw new Error(`workflow ${workflowId} has no start input in its history`);
      return client.workflow.options.loadedDataConverter.payloadConverter.fromPayload(payload);
    },
    async terminate(reason) {
      await handle.terminate(reason);
    },
  };
}

/** True when `input` is what a send of the document as it now stands would start the workflow with. */
export function startedFrom(
  input: ApprovalWorkflowInput,
  document: Document,
  approvers: readonly Approver[],
): boolean {
  const key = (a: { id: string; orderIndex: number; actionType: string }) =>
    `${a.id}@${a.orderIndex}:${a.actionType}`;
  const started = input.approvers.map(key).sort();
  const stored = approvers.map(key).sort();
  return (
    input.workflowType === document.workflowType &&
    input.expiresAt === document.expiresAt.toISOString() &&
    started.length === stored.length &&
    started.every((k, i) => k === stored[i])
  );
}
