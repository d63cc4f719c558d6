import type { SecretBox } from '../../auth/secret-box.ts';
import type { Knex } from '../../db/knex.ts';
import { actionEvidenceStore } from './action-evidence-store.ts';
import { approversStore, type Approver } from '../documents/approvers-store.ts';
import { delegationsStore } from './delegations-store.ts';
import type { Document } from '../documents/documents-store.ts';
import type { Logger } from '../../logger.ts';
import { documentEvents, withApprover } from '../events/document-events.ts';
import type { DocumentEvent } from '../events/document-events-store.ts';
import type { ActOutcome } from './act-answer.ts';
import { writeApproverAction } from './action-write.ts';
import { lockForAction } from './action-lock-store.ts';
import { settleSignal } from './approval-signal-relay.ts';
import { approvalSignalsStore, type ApprovalSignal } from './approval-signals-store.ts';
import { ApprovalRefused, type ApprovalClient } from './client.ts';
import {
  ACTION_RECORDED_SIGNAL,
  approvalWorkflowId,
  type ActionEvidence,
  type ActionKind,
  type Refusal,
} from './definitions.ts';
import { progressOf } from './rules.ts';
import { decideAction, type ApprovalState } from './workflow/approval-state.ts';

export interface ActInDatabaseDeps {
  db: Knex;
  approvals: ApprovalClient;
  logger: Logger;
  /** Seals the bearer URLs events carry. */
  secrets: SecretBox;
  /** Hands the action's committed events to webhook delivery (absent: the outbox sweep sends them). */
  webhooks?: RecordedEventsDispatch;
}

/** An approver's action and what it came with, under the id its evidence row takes (chosen by the caller). */
export interface EvidencedAction {
  approverId: string;
  kind: ActionKind;
  evidenceId: string;
  evidence: ActionEvidence;
}

/** What an action's caller hands its committed events to (the webhook dispatcher's `dispatchRecorded`). */
export interface RecordedEventsDispatch {
  dispatchRecorded(events: readonly DocumentEvent[]): Promise<unknown>;
}

/**
 * Why the approver may not act on `document` now, or undefined when they may: the workflow's own reducer
 * (decideAction) applied to the read model under the document's row lock, and the deadline by the database's clock.
 */
function refusalOf(
  document: Document,
  approvers: readonly Approver[],
  action: { approverId: string; kind: ActionKind },
  now: Date,
): Refusal | undefined {
  const state: ApprovalState = {
    workflowType: document.workflowType,
    status: document.status === 'draft' ? 'pending' : document.status,
    approvers: approvers.map((a) => ({
      id: a.id,
      orderIndex: a.orderIndex,
      actionType: a.actionType,
      state: a.status,
    })),
  };
  if (document.status === 'draft') return 'not_notified';
  const decision = decideAction(state, action.approverId, action.kind);
  if (!decision.accepted) return decision.refusal;
  return now >= document.expiresAt ? 'document_closed' : undefined;
}

/**
 * An approver's action decided and recorded in one transaction holding the document's row lock: the same rules
 * the workflow applies (open, not past `expires_at` by the database clock, their turn, not acted, no delegation of
 * theirs in flight), then the action written as the workflow's activity writes it (writeApproverAction), and the
 * signal that tells the run queued in the same transaction. The answer comes from that transaction; the signal
 * is sent after commit, and the relay (approval-signal-relay.ts) sends it if this process never does. A refusal
 * is ApprovalRefused, as from the workflow. Undefined, with nothing written, when the document's run takes actions
 * as the act update instead (runs of earlier versions).
 */
export async function actInDatabase(
  deps: ActInDatabaseDeps,
  documentId: string,
  action: EvidencedAction,
): Promise<ActOutcome | undefined> {
  const recorded = await record(deps, documentId, action);
  if (!recorded) return undefined;
  sendAfterCommit(deps, recorded.signal);
  deps.webhooks
    ?.dispatchRecorded(recorded.events)
    .catch((err: unknown) => deps.logger.warn({ err, documentId }, 'events of an action not dispatched yet'));
  return recorded.outcome;
}

interface Recorded {
  outcome: ActOutcome;
  signal: ApprovalSignal;
  /** The events the transaction recorded, in order. */
  events: DocumentEvent[];
}

/**
 * The decision and the writes, in one transaction holding the document's row lock; undefined (nothing written)
 * when the run takes the act update.
 */
async function record(
  deps: ActInDatabaseDeps,
  documentId: string,
  action: EvidencedAction,
): Promise<Recorded | undefined> {
  const events = documentEvents({ db: deps.db, logger: deps.logger, secrets: deps.secrets });
  const { result, recorded } = await events.collecting(async (trx) => {
    const locked = await lockForAction(trx, documentId);
    if (!locked) throw new ApprovalRefused('unknown_approver');
    if (locked.protocol !== 'signal') return undefined;
    const { document, now } = locked;
    const approvers = await approversStore(trx).listByDocument(documentId);
    const approver = approvers.find((a) => a.id === action.approverId);
    const refusal = refusalOf(document, approvers, action, now);
    if (refusal) throw new ApprovalRefused(refusal);
    // A delegation of this approver's step that the workflow has not answered yet: the step is being handed over.
    // Only a document that allows delegation can have one (the flag is fixed once the document is sent).
    const delegations = document.allowDelegation ? await delegationsStore(trx).submitted(documentId) : [];
    if (delegations.some((d) => d.fromApproverId === action.approverId))
      throw new ApprovalRefused('delegation_pending');
    // Written accepted here, in the transaction that writes the action: a refusal or a failure below rolls it
    // back. An approver who acted already was refused above, under the same lock.
    const stored = await actionEvidenceStore(trx).recordAccepted({
      id: action.evidenceId,
      documentId,
      approverId: action.approverId,
      kind: action.kind,
      evidence: action.evidence,
    });
    let current: readonly Approver[] = approvers;
    if (approver!.status === 'waiting') {
      // Their turn, and they answer the request WhatsApp took, before its activity wrote them notified: written
      // here first, once (keyed), so the read model and the events keep notified before acted.
      // `notify: false` approvers get no WhatsApp request: their notification reads `skipped`, as the activity
      // writes it.
      const notification = approver!.notify ? 'accepted' : 'skipped';
      const notified = (await approversStore(trx).markNotified(approver!.id, {
        status: notification,
        error: null,
      }))!;
      current = withApprover(approvers, notified);
      await events.record(trx, {
        event: 'approver.notified',
        dedupeKey: `approver.notified:${approver!.id}`,
        document,
        approver: notified,
        approvers: current,
      });
    }
    await writeApproverAction(events, trx, {
      documentId,
      document,
      approvers: current,
      approver: approver!,
      kind: action.kind,
      evidence: stored.evidence,
    });
    const signal = await approvalSignalsStore(trx).enqueue({
      documentId,
      workflowId: document.workflowId ?? approvalWorkflowId(documentId),
      signal: ACTION_RECORDED_SIGNAL,
      payload: { approverId: action.approverId, kind: action.kind, evidenceId: stored.id },
    });
    const acted = approvers.map((a) =>
      a.id === approver!.id
        ? ({ status: action.kind === 'complete' ? 'completed' : 'rejected' } as const)
        : a,
    );
    const status = action.kind === 'reject' ? 'rejected' : 'in_progress';
    return { outcome: { status, ...progressOf(acted) }, signal };
  });
  return result && { ...result, events: [...recorded.values()] };
}

/** The signal sent now, best effort: one that fails stays queued for the relay. */
function sendAfterCommit(deps: ActInDatabaseDeps, signal: ApprovalSignal): void {
  deps.approvals
    .follow(signal)
    .then((outcome) => settleSignal(deps.db, signal, outcome))
    .catch((err: unknown) =>
      deps.logger.warn(
        { err, documentId: signal.documentId, signalId: signal.id },
        'an action was recorded but its signal not sent yet; the relay sends it',
      ),
    );
}
