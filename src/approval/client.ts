import {
  WithStartWorkflowOperation,
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  type Client,
} from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { Knex } from '../db/knex.ts';
import type { Approver } from '../db/stores/approvers-store.ts';
import type { Document } from '../db/stores/documents-store.ts';
import { AppError } from '../errors.ts';
import {
  actUpdate,
  APPROVAL_WORKFLOW_TYPE,
  approvalWorkflowId,
  remindUpdate,
  REFUSAL_MESSAGES,
  retryFinalizationUpdate,
  sentUpdate,
  voidUpdate,
  type ActInput,
  type ApprovalView,
  type ApprovalWorkflowInput,
  type Refusal,
} from './definitions.ts';
import { AccountIdKey, DocumentReferenceKey, DocumentStatusKey } from '../temporal/search-attributes.ts';

export interface ApprovalClientDeps {
  client: Client;
  taskQueue: string;
  /** How long a caller waits for the workflow to answer before hearing 503. */
  answerTimeoutMs?: number;
}

/** A refusal from the workflow, or undefined when `err` is something else. */
function refusalOf(err: unknown): Refusal | 'workflow_closed' | undefined {
  if (err instanceof WorkflowNotFoundError) return 'workflow_closed';
  if (err instanceof WorkflowUpdateFailedError && err.cause instanceof ApplicationFailure) {
    const type = err.cause.type as Refusal;
    if (type in REFUSAL_MESSAGES) return type;
  }
  // An update sent to a workflow that has just completed.
  if (err instanceof Error && /workflow execution already completed/i.test(err.message))
    return 'workflow_closed';
  return undefined;
}

export class ApprovalRefused extends Error {
  constructor(readonly refusal: Refusal | 'workflow_closed') {
    super(refusal === 'workflow_closed' ? 'The approval has finished' : REFUSAL_MESSAGES[refusal]);
    this.name = 'ApprovalRefused';
  }
}

/**
 * The API's door into the approval workflows: starts them and sends them updates, and turns the workflow's
 * refusals into ApprovalRefused so each caller (API, approval page, WhatsApp) words its own answer.
 */
export function createApprovalClient(deps: ApprovalClientDeps) {
  const timeout = deps.answerTimeoutMs ?? 20_000;
  const withAnswer = async <T>(run: () => Promise<T>): Promise<T> => {
    try {
      return await deps.client.withDeadline(Date.now() + timeout, run);
    } catch (err) {
      const refusal = refusalOf(err);
      if (refusal) throw new ApprovalRefused(refusal);
      if (err instanceof WorkflowExecutionAlreadyStartedError) throw err;
      if (/deadline|DEADLINE_EXCEEDED|timed? ?out/i.test(String((err as Error)?.message ?? err))) {
        throw new AppError('unavailable', 'The approval service did not answer in time; try again shortly');
      }
      throw err;
    }
  };
  const handle = (documentId: string) => deps.client.workflow.getHandle(approvalWorkflowId(documentId));

  return {
    /** Starts the workflow and returns once the document reads `pending` (update-with-start). */
    async send(document: Document, approvers: readonly Approver[]): Promise<ApprovalView> {
      const input: ApprovalWorkflowInput = {
        documentId: document.id,
        accountId: document.accountId,
        reference: document.reference,
        workflowType: document.workflowType,
        expiresAt: document.expiresAt.toISOString(),
        approvers: approvers.map((a) => ({ id: a.id, orderIndex: a.orderIndex, actionType: a.actionType })),
      };
      const start = new WithStartWorkflowOperation(APPROVAL_WORKFLOW_TYPE, {
        workflowId: approvalWorkflowId(document.id),
        taskQueue: deps.taskQueue,
        args: [input],
        workflowIdConflictPolicy: 'FAIL',
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        typedSearchAttributes: [
          { key: DocumentStatusKey, value: 'pending' },
          { key: DocumentReferenceKey, value: document.reference },
          { key: AccountIdKey, value: document.accountId },
        ],
      });
      try {
        return await withAnswer(() =>
          deps.client.workflow.executeUpdateWithStart(sentUpdate, { startWorkflowOperation: start }),
        );
      } catch (err) {
        if (err instanceof WorkflowExecutionAlreadyStartedError) throw new ApprovalRefused('workflow_closed');
        throw err;
      }
    },

    act(documentId: string, input: ActInput): Promise<ApprovalView> {
      return withAnswer(() => handle(documentId).executeUpdate(actUpdate, { args: [input] }));
    },

    void(documentId: string): Promise<ApprovalView> {
      return withAnswer(() =>
        handle(documentId).executeUpdate(voidUpdate, { args: [{ at: new Date().toISOString() }] }),
      );
    },

    remind(documentId: string, approverId: string): Promise<{ wamid: string | null }> {
      return withAnswer(() => handle(documentId).executeUpdate(remindUpdate, { args: [{ approverId }] }));
    },

    /** The operator's retry of a failed finalization (or of the write the workflow is parked on). */
    retryFinalization(documentId: string): Promise<ApprovalView> {
      return withAnswer(() => handle(documentId).executeUpdate(retryFinalizationUpdate));
    },
  };
}

export type ApprovalClient = ReturnType<typeof createApprovalClient>;

/** What the approval services need: the read model, and the one door into the workflows. */
export interface ApprovalDeps {
  db: Knex;
  approvals: ApprovalClient;
}
