import {
  isGrpcDeadlineError,
  isGrpcServiceError,
  ServiceError,
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  WorkflowUpdateRPCTimeoutOrCancelledError,
  type Client,
  type WorkflowHandle,
} from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { SecretBox } from '../../auth/secret-box.ts';
import type { Knex } from '../../db/knex.ts';
import type { Approver } from '../documents/approvers-store.ts';
import type { Document } from '../documents/documents-store.ts';
import { AppError } from '../../errors.ts';
import {
  actUpdate,
  actionRecordedSignal,
  DOCUMENT_APPROVAL_WORKFLOW_TYPE,
  approvalWorkflowId,
  delegateUpdate,
  remindUpdate,
  REFUSAL_MESSAGES,
  retryFinalizationUpdate,
  voidUpdate,
  type ActInput,
  type ApprovalView,
  type ApprovalWorkflowInput,
  type DelegateInput,
  type RecordedAction,
  type Refusal,
} from './definitions.ts';
import type { ReminderSettings } from '../../domain/model.ts';
import type { WriteNotices } from './write-notices.ts';
import { effectiveReminders, workflowReminders } from './workflow/reminder-schedule.ts';
import { AccountIdKey, DocumentReferenceKey, DocumentStatusKey } from '../../temporal/search-attributes.ts';

export interface ApprovalClientDeps {
  client: Client;
  taskQueue: string;
  /** How long a caller waits for the workflow to answer before hearing 503. */
  answerTimeoutMs?: number;
  /** Automatic reminders: the configured default (AUTO_REMIND_*) and the test-only APPROVAL_TIMER_SCALE. */
  autoReminders?: { defaults: ReminderSettings | null; timerScale: number };
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

/**
 * What became of a delegation whose answer the page did not hear, as Temporal tells it by the update's id (the
 * delegation row's id): `accepted` (the workflow took it), `refused` (its handler failed after taking it),
 * `not_taken` (Temporal does not know the update: it never arrived, or the validator refused it, which leaves no
 * trace; also when the workflow is gone) or `pending` (the workflow has it and has not answered yet).
 */
export type DelegationOutcome = 'accepted' | 'refused' | 'not_taken' | 'pending';

/** Temporal could not be reached (gRPC UNAVAILABLE, or no connection could be made). */
function unreachable(err: unknown): boolean {
  if (!(err instanceof ServiceError)) return false;
  const code = (err.cause as { code?: unknown } | undefined)?.code;
  return code === GRPC_UNAVAILABLE || /unavailable|connect/i.test(err.message);
}
const GRPC_UNAVAILABLE = 14;

/**
 * Whether `err`, from an update, means its answer was lost rather than given: no answer in time (503), or
 * Temporal unreachable (a gRPC UNAVAILABLE or deadline somewhere in its causes). The workflow may have taken it.
 */
export function answerLost(err: unknown): boolean {
  if (err instanceof AppError) return err.code === 'unavailable';
  for (let e = err, n = 0; e && n < 8; e = (e as { cause?: unknown }).cause, n++) {
    if (unreachable(e)) return true;
    if (isGrpcServiceError(e) && (Number(e.code) === GRPC_UNAVAILABLE || isGrpcDeadlineError(e))) return true;
    // grpc-js's own, when no connection could be made: "Failed to connect before the deadline".
    if (e instanceof Error && /failed to connect|ECONNREFUSED/i.test(e.message)) return true;
  }
  return false;
}

export class ApprovalRefused extends Error {
  constructor(readonly refusal: Refusal | 'workflow_closed') {
    super(refusal === 'workflow_closed' ? 'The approval has finished' : REFUSAL_MESSAGES[refusal]);
    this.name = 'ApprovalRefused';
  }
}

/**
 * How a document's approval run starts: the workflow's input (exactly these approvers; the reminders its own, its
 * account's or the configured default) and the start's options, whatever the workflow type.
 */
export function approvalStart(
  document: Document,
  approvers: readonly Approver[],
  options: Pick<ApprovalClientDeps, 'taskQueue' | 'autoReminders'> & {
    accountReminders: ReminderSettings | null;
  },
) {
  const reminders = workflowReminders(
    effectiveReminders(document.reminders, options.accountReminders, options.autoReminders?.defaults ?? null),
    options.autoReminders?.timerScale ?? 1,
  );
  const input: ApprovalWorkflowInput = {
    documentId: document.id,
    accountId: document.accountId,
    reference: document.reference,
    workflowType: document.workflowType,
    expiresAt: document.expiresAt.toISOString(),
    approvers: approvers.map((a) => ({ id: a.id, orderIndex: a.orderIndex, actionType: a.actionType })),
    ...(reminders ? { reminders } : {}),
    ...(document.allowDelegation ? { allowDelegation: true } : {}),
  };
  return {
    workflowId: approvalWorkflowId(document.id),
    taskQueue: options.taskQueue,
    args: [input] as [ApprovalWorkflowInput],
    workflowIdConflictPolicy: 'FAIL' as const,
    // A closed run blocks the id unless it was ended without taking effect (markDocumentSent terminates a run
    // whose send never committed); a document is sent at most once because send holds its row lock.
    workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY' as const,
    typedSearchAttributes: [
      { key: DocumentStatusKey, value: 'pending' },
      { key: DocumentReferenceKey, value: document.reference },
      { key: AccountIdKey, value: document.accountId },
    ],
  };
}

/**
 * `run` (a call to a workflow), given `timeoutMs` to answer; the workflow's refusal as ApprovalRefused, no answer
 * in time or a call Temporal failed as a 503 (AppError 'unavailable').
 */
async function answered<T>(client: Client, timeoutMs: number, run: () => Promise<T>): Promise<T> {
  try {
    return await client.withDeadline(Date.now() + timeoutMs, run);
  } catch (err) {
    const refusal = refusalOf(err);
    if (refusal) throw new ApprovalRefused(refusal);
    if (err instanceof WorkflowExecutionAlreadyStartedError) throw err;
    // No answer in time: the client's deadline, or the call cancelled on its way (gRPC CANCELLED, "Call
    // cancelled", which the client reports as the same error). The workflow may still take it.
    if (
      err instanceof WorkflowUpdateRPCTimeoutOrCancelledError ||
      /deadline|DEADLINE_EXCEEDED|timed? ?out/i.test(String((err as Error)?.message ?? err))
    ) {
      throw new AppError(
        'service_unavailable',
        'The approval service did not answer in time; try again shortly',
      );
    }
    // The update call itself failed at Temporal (say the workflow task that held it failed, and the server
    // aborted the update: FAILED_PRECONDITION). The workflow did not answer: the action may not have been taken,
    // and asking again is safe (a taken one is refused as already acted). A 503, so Meta and browsers retry.
    if (err instanceof ServiceError) {
      throw new AppError(
        'service_unavailable',
        'The approval service could not take this just now; try again shortly',
      );
    }
    throw err;
  }
}

/** The outcome of a delegation update, without sending it again: see ApprovalClient.delegationOutcome. */
async function delegationOutcome(
  client: Client,
  workflow: WorkflowHandle,
  delegationId: string,
  waitMs: number,
): Promise<DelegationOutcome> {
  try {
    await client.withDeadline(Date.now() + waitMs, () =>
      workflow.getUpdateHandle<ApprovalView>(delegationId).result(),
    );
    return 'accepted';
  } catch (err) {
    if (err instanceof WorkflowUpdateFailedError) return 'refused';
    // NOT_FOUND: no such update (or no such workflow run any more).
    if (err instanceof WorkflowNotFoundError) return 'not_taken';
    // The workflow has it and did not answer within waitMs.
    if (err instanceof WorkflowUpdateRPCTimeoutOrCancelledError) return 'pending';
    if (answerLost(err))
      throw new AppError('service_unavailable', 'The approval service is unavailable; try again shortly');
    throw err;
  }
}

/**
 * The API's door into the approval workflows: starts them and sends them updates, and turns the workflow's
 * refusals into ApprovalRefused so each caller (API, approval page, WhatsApp) words its own answer.
 */
export function createApprovalClient(deps: ApprovalClientDeps) {
  const timeout = deps.answerTimeoutMs ?? 20_000;
  const withAnswer = <T>(run: () => Promise<T>) => answered(deps.client, timeout, run);
  const handle = (documentId: string) => deps.client.workflow.getHandle(approvalWorkflowId(documentId));

  return {
    /** How long a caller waits for the workflow's answer (a request older than this has had its answer). */
    answerTimeoutMs: timeout,

    /**
     * Starts the workflow with exactly these approvers, and returns once Temporal has it: a plain start that waits
     * on no activity, so a caller may hold the document's row lock meanwhile (the workflow's first activity,
     * markDocumentSent, takes that lock and waits for the caller's commit). A workflow id already taken is
     * ApprovalRefused('workflow_closed'); a Temporal that does not answer is a 503 (AppError 'unavailable').
     */
    async start(
      document: Document,
      approvers: readonly Approver[],
      accountReminders: ReminderSettings | null = null,
    ): Promise<void> {
      const options = approvalStart(document, approvers, { ...deps, accountReminders });
      try {
        await withAnswer(() => deps.client.workflow.start(DOCUMENT_APPROVAL_WORKFLOW_TYPE, options));
      } catch (err) {
        if (err instanceof WorkflowExecutionAlreadyStartedError) throw new ApprovalRefused('workflow_closed');
        // Not started, because Temporal could not be reached: the caller rolls back and the client may retry.
        if (unreachable(err))
          throw new AppError('service_unavailable', 'The approval service is unavailable; try again shortly');
        throw err;
      }
    },

    act(documentId: string, input: ActInput): Promise<ApprovalView> {
      return withAnswer(() => handle(documentId).executeUpdate(actUpdate, { args: [input] }));
    },

    /**
     * Tells a run of an action the API recorded (act-in-database.ts); `gone` when the run has ended, which then
     * needs it no more (its last write found the action in the read model).
     */
    async follow(signal: { workflowId: string; payload: RecordedAction }): Promise<'sent' | 'gone'> {
      try {
        await withAnswer(() =>
          deps.client.workflow.getHandle(signal.workflowId).signal(actionRecordedSignal, signal.payload),
        );
        return 'sent';
      } catch (err) {
        if (err instanceof ApprovalRefused && err.refusal === 'workflow_closed') return 'gone';
        throw err;
      }
    },

    /**
     * A delegation whose row is stored (ids only: nothing personal goes to the workflow). The update's id is the
     * row's id: asked again, Temporal answers once for both, and `delegationOutcome` can find it.
     */
    delegate(documentId: string, input: DelegateInput): Promise<ApprovalView> {
      return withAnswer(() =>
        handle(documentId).executeUpdate(delegateUpdate, { args: [input], updateId: input.delegationId }),
      );
    },

    /**
     * The outcome of the delegation update `delegationId`, without sending it again: waits at most `waitMs` for an
     * update the workflow has but has not finished. Temporal unreachable is a 503 (AppError 'unavailable').
     */
    delegationOutcome: (documentId: string, delegationId: string, waitMs = Math.min(timeout, 5_000)) =>
      delegationOutcome(deps.client, handle(documentId), delegationId, waitMs),

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
  /** Seals the link tokens a send issues. */
  secrets: SecretBox;
  /** The workflow's writes as PostgreSQL announces them (the API server's); without them the rows are read. */
  writeNotices?: WriteNotices;
}
