import {
  ActivityFailure,
  ApplicationFailure,
  allHandlersFinished,
  condition,
  isCancellation,
  log,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { ApprovalAttentionKey, DocumentStatusKey } from '../../../temporal/search-attributes.ts';
import type {
  ApprovalView,
  ApprovalWorkflowInput,
  Attention,
  DelegateInput,
  FinalizationFailure,
  FinalizeWithCopiesResult,
  CloseResult,
  RecordedAction,
} from '../definitions.ts';
import { ApprovalRequests } from './approval-requests.ts';
import {
  acceptsActions,
  allCompleted,
  applyExpiry,
  createApprovalState,
  decideDelegation,
  decideRemind,
  decideRetryFinalization,
  decideVoid,
  dueForNotification,
  followAction,
  markApproved,
  markFinalizationFailed,
  markNotified,
  progress,
  type ApprovalState,
} from './approval-state.ts';
import { approvalEffects, beginLocally, policiesLocally, type ApprovalEffects } from './effects.ts';
import { finalizeOrPark, sendSignedCopies, tellVoided } from './finalization.ts';
import { failureMessage, refuse, type RunContext } from './run-context.ts';

/**
 * One document's approval, from send to a terminal state. This class owns the run's state; every decision about
 * it is made by the pure reducer (approval-state.ts), and every side effect is an activity (effects.ts). The
 * update handlers are its methods; an update's write is scheduled by the workflow task that accepts it, so nothing
 * outside the workflow changes before the acceptance is in the history, and nobody is asked until it has settled.
 */
export class ApprovalRun implements RunContext {
  state: ApprovalState;
  readonly workflowId = workflowInfo().workflowId;
  private ran?: ApprovalEffects;
  private readonly requests: ApprovalRequests;
  private attention: Attention | null = null;
  /** Operator retries of a parked write. */
  private retries = 0;
  private manualReminders = 0;
  /** Writes started by update handlers: the run waits for them before anything that reads them. */
  private writesInFlight = 0;
  /** Accepted delegations whose write has not settled: nobody is asked meanwhile. */
  private unsettled = 0;
  /** The evidence ids of the recorded actions this run has followed. */
  private readonly followed = new Set<string>();
  /** The finalization's own activity sent the signed copies (or they were refused for good). */
  private copiesSettled = false;
  /** The status last published as the DocumentStatus search attribute (the start's, at first). */
  private publishedStatus: unknown = workflowInfo().typedSearchAttributes.get(DocumentStatusKey);

  constructor(readonly input: ApprovalWorkflowInput) {
    this.state = createApprovalState(input.workflowType, input.approvers, {
      allowDelegation: input.allowDelegation === true,
    });
    this.requests = new ApprovalRequests(this, () => this.unsettled > 0);
  }

  get effects(): ApprovalEffects {
    if (!this.ran) throw new Error('the approval run has not begun');
    return this.ran;
  }

  view(): ApprovalView {
    const { state } = this;
    return {
      status: state.status,
      finalizing: allCompleted(state) && state.status === 'in_progress',
      ...progress(state),
      approvers: state.approvers.map((a) => ({ id: a.id, orderIndex: a.orderIndex, state: a.state })),
      finalizationFailure: state.finalizationFailure ?? null,
      attention: this.attention,
    };
  }

  /** From send to a terminal state; never a failed workflow. */
  async run(): Promise<ApprovalView> {
    await this.begin();
    await Promise.all([this.requests.dispatchWhileOpen(), this.closeOrExpire()]);
    this.requests.cancel();
    // Handlers' writes land before anything that reads them (finalization reads every approver's evidence).
    await condition(() => this.writesInFlight === 0);
    if (allCompleted(this.state) && this.state.status === 'in_progress') await finalizeOrPark(this);
    if (this.state.status === 'approved' && !this.copiesSettled) await sendSignedCopies(this);
    if (this.state.status === 'voided') await tellVoided(this, this.requests.told());
    await condition(allHandlersFinished);
    return this.view();
  }

  // ---- Update handlers (validators refuse before anything enters the history) ----

  /**
   * An action the API decided and recorded (act-in-database.ts) under the document's row lock: the read model is
   * written, so the run only follows it; the next approvers are then asked, or the document finalized, as the run
   * goes on. Idempotent by evidence id (the API's own signal and the relay's may both arrive); applied whatever the
   * run thought of the approver's turn, since the database is the arbiter (a notice's activity may not have
   * reported back yet).
   */
  follow({ approverId, kind, evidenceId }: RecordedAction): void {
    if (this.followed.has(evidenceId)) return;
    this.followed.add(evidenceId);
    this.state = followAction(this.state, approverId, kind);
    this.publishStatus();
  }

  validateDelegate({ approverId, delegateId, delegationId }: DelegateInput): void {
    if (typeof delegateId !== 'string' || typeof delegationId !== 'string') {
      throw ApplicationFailure.create({
        type: 'invalid_delegation',
        message: 'A delegation needs the delegate id and the id of its stored row (delegationId)',
        nonRetryable: true,
      });
    }
    const decision = decideDelegation(this.state, approverId, delegateId);
    if (!decision.accepted) refuse(decision.refusal);
  }

  async delegate({ approverId, delegateId, delegationId }: DelegateInput): Promise<ApprovalView> {
    const decision = decideDelegation(this.state, approverId, delegateId);
    if (!decision.accepted) refuse(decision.refusal); // validated already; the state cannot have moved since
    const { held, delegates } = this.requests;
    held.add(delegateId);
    delegates.add(delegateId);
    this.state = decision.next;
    await this.begun();
    const delegation = { documentId: this.input.documentId, approverId, delegateId, delegationId };
    try {
      await this.write(() =>
        this.settling(() =>
          this.durably('recordDelegation', () => this.effects.writes.recordDelegation(delegation)),
        ),
      );
    } finally {
      held.delete(delegateId);
    }
    return this.view();
  }

  validateVoid(): void {
    const decision = decideVoid(this.state);
    if (!decision.accepted) refuse(decision.refusal);
  }

  /**
   * The void written first, on condition that the read model still accepts it: an action the API recorded before
   * (one that completes or rejects the document) wins, and the void is refused as the document being closed.
   */
  async void({ at }: { at: string }): Promise<ApprovalView> {
    await this.begun();
    const voiding = { documentId: this.input.documentId, to: 'voided' as const, at };
    let result: CloseResult | undefined;
    await this.write(async () => {
      result = await this.durably('closeDocument', () => this.effects.writes.closeDocument(voiding));
    });
    result!.actions.forEach((action) => this.follow(action));
    const decision = decideVoid(this.state);
    if (!result!.closed || !decision.accepted) refuse('document_closed');
    this.state = decision.next;
    this.publishStatus();
    return this.view();
  }

  validateRemind({ approverId }: { approverId: string }): void {
    const refusal = decideRemind(this.state, approverId);
    if (refusal) refuse(refusal);
  }

  async remind({ approverId }: { approverId: string }): Promise<{ wamid: string | null }> {
    this.manualReminders++;
    const idempotencyKey = `${this.workflowId}:${approverId}:reminder:${this.manualReminders}`;
    await this.begun();
    const result = await this.effects.notices.notifyApprover({
      documentId: this.input.documentId,
      approverId,
      kind: 'reminder',
      idempotencyKey,
    });
    return { wamid: result.wamid };
  }

  validateRetry(): void {
    if (!this.attention && !decideRetryFinalization(this.state).accepted) refuse('nothing_to_retry');
  }

  /** Runs a failed finalization again, or the write the run is parked on; returns once taken. */
  retry(): ApprovalView {
    if (this.attention) this.retries++;
    else {
      const decision = decideRetryFinalization(this.state);
      if (!decision.accepted) refuse(decision.refusal);
      this.state = decision.next;
    }
    return this.view();
  }

  // ---- What the parts of the run call (RunContext) ----

  async durably<T>(activity: string, run: () => Promise<T>): Promise<T> {
    for (;;) {
      try {
        return await run();
      } catch (err) {
        if (!(err instanceof ActivityFailure)) throw err;
        this.attention = { activity, error: failureMessage(err), since: new Date().toISOString() };
        log.error('approval workflow parked: a read-model write exhausted its retry policy', {
          documentId: this.input.documentId,
          ...this.attention,
        });
        this.publishAttention(activity);
        const seen = this.retries;
        await condition(() => this.retries !== seen);
        this.attention = null;
        this.publishAttention(this.state.finalizationFailure ? 'finalization' : null);
      }
    }
  }

  publishAttention(value: string | null): void {
    upsertSearchAttributes([{ key: ApprovalAttentionKey, value }] as never);
  }

  notified(approverId: string): void {
    this.state = markNotified(this.state, [approverId]);
  }

  approve(result: FinalizeWithCopiesResult): void {
    this.copiesSettled = !result.retryCopies;
    if (result.copies && result.copies.failed > 0)
      log.warn('WhatsApp refused some signed copies', { ...result.copies });
    this.state = markApproved(this.state);
    this.publishStatus();
  }

  failFinalization(failure: FinalizationFailure): void {
    this.state = markFinalizationFailed(this.state, failure);
  }

  // ---- The run's own steps ----

  /**
   * The send recorded, the policies read and the first approval requests sent by one local activity; when its
   * attempts fail, the policies and the send on their own (markDocumentSent is idempotent), the requests after.
   */
  private async begin(): Promise<void> {
    const first = dueForNotification(this.state).map((a) => a.id);
    let begun = false;
    try {
      const begin = await beginLocally.beginApproval({
        documentId: this.input.documentId,
        workflowId: this.workflowId,
        notices: first.map((id) => this.requests.requestOf(id)),
        protocol: 'signal',
      });
      this.ran = approvalEffects(begin.policies);
      begin.notices.forEach((outcome, i) => this.requests.carried.set(first[i]!, outcome));
      begun = true;
    } catch (err) {
      if (isCancellation(err)) throw err;
    }
    this.ran ??= approvalEffects(await policiesLocally.approvalPolicies());
    if (!begun) {
      const sent = {
        documentId: this.input.documentId,
        workflowId: this.workflowId,
        protocol: 'signal' as const,
      };
      await this.durably('markDocumentSent', () => this.effects.localWrites.markDocumentSent(sent));
    }
    this.publishStatus();
  }

  /** An update that arrives before the run has begun waits for its policies (the first task's local activity). */
  private async begun(): Promise<void> {
    if (!this.ran) await condition(() => this.ran !== undefined);
  }

  /**
   * The document closes (acted, rejected, voided, all completed), or the durable deadline passes first. Then the
   * expiry is written on condition that the read model still accepts actions; either way the actions recorded
   * before it are followed, so an action that completed the document just before the deadline finalizes it.
   */
  private async closeOrExpire(): Promise<void> {
    const untilDeadline = Math.max(Date.parse(this.input.expiresAt) - Date.now(), 1);
    if (await condition(() => !acceptsActions(this.state), untilDeadline)) return;
    const expiring = { documentId: this.input.documentId, to: 'expired' as const };
    const result = await this.durably('closeDocument', () =>
      this.effects.localWrites.closeDocument(expiring),
    );
    result.actions.forEach((action) => this.follow(action));
    if (!result.closed) return;
    this.state = applyExpiry(this.state);
    this.publishStatus();
    this.requests.cancelRequests();
  }

  /** A write started by an update handler: the run waits for these before finishing. */
  private async write(run: () => Promise<void>): Promise<void> {
    this.writesInFlight++;
    try {
      await run();
    } finally {
      this.writesInFlight--;
    }
  }

  /** The write of an accepted action or delegation: nobody is asked until it has settled. */
  private async settling(run: () => Promise<void>): Promise<void> {
    this.unsettled++;
    try {
      await run();
    } finally {
      this.unsettled--;
    }
  }

  /** The DocumentStatus search attribute, upserted only when it changed. */
  private publishStatus(): void {
    if (this.state.status === this.publishedStatus) return;
    this.publishedStatus = this.state.status;
    upsertSearchAttributes([{ key: DocumentStatusKey, value: this.state.status }] as never);
  }
}
