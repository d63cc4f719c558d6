import { ApplicationFailure, Context } from '@temporalio/activity';
import type { SecretBox } from '../auth/secret-box.ts';
import type { Db, Knex } from '../db/knex.ts';
import { actionEvidenceStore, type StoredEvidence } from '../db/stores/action-evidence-store.ts';
import { approversStore, openLinkToken, type Approver } from '../db/stores/approvers-store.ts';
import { delegationsStore } from '../db/stores/delegations-store.ts';
import { documentEventsStore, type DocumentEvent } from '../db/stores/document-events-store.ts';
import { documentsStore, openFinalToken, type Document } from '../db/stores/documents-store.ts';
import { whatsAppMessagesStore } from '../db/stores/whatsapp-messages-store.ts';
import { serializeApprover, serializeDocument } from '../documents/serialize.ts';
import type { Logger } from '../logger.ts';
import {
  CC_GREETING,
  isWhatsAppSendError,
  languageFor,
  type ApprovalNotice,
  sendNotice,
  type RecordRetry,
  type WhatsAppProvider,
  type WhatsAppTemplateConfig,
} from '../whatsapp/index.ts';
import {
  ACTION_NOT_WRITTEN,
  type ApprovalActivities,
  type ApprovalWorkflowInput,
  type ApprovalPolicies,
  type BatchedNoticeResult,
  type ActionNoticesInput,
  type FinalActionInput,
  type NotificationFailureInput,
  type NotifyApproverInput,
  type RecordActionInput,
  type RecordDelegationInput,
  type SignedCopiesInput,
} from './definitions.ts';
import { finalFilename, finalFileUrl } from '../documents/final-file.ts';
import type { FinalizedDocument } from './finalize.ts';
import { heartbeatMemory } from './heartbeat-memory.ts';
import { personalData, redact, withHistorySafeFailures } from './history-safe.ts';
import { REMIND_LOCK_CLASS } from './remind-approver.ts';
import { hasActed, isOpen, OPEN_STATUSES } from './rules.ts';
import { whileHeartbeating } from '../temporal/heartbeat.ts';

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
function startedFrom(
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

export interface ApprovalActivityDeps {
  db: Knex;
  logger: Logger;
  /** Seals and opens link tokens, the file's token, the outbox's payloads and events' bearer URLs. */
  secrets: SecretBox;
  whatsapp: { provider: WhatsAppProvider; templates: WhatsAppTemplateConfig; recordRetry?: RecordRetry };
  /** Called after an event is committed, to hand it to webhook delivery. */
  onEvent?: (event: DocumentEvent) => Promise<void>;
  /** Produces and stores the signed final PDF; set by the finalization module. */
  finalize?: (documentId: string) => Promise<FinalizedDocument>;
  /**
   * The current activity's workflow run (the worker passes `activityWorkflowRun`). markDocumentSent uses it when
   * it finds a draft; without it (activities called directly) the draft is moved unchecked.
   */
  workflowRun?: () => WorkflowRun;
  /** The per-approver reminder cap automatic reminders respect (REMIND_MAX_PER_APPROVER); 5 when not given. */
  reminderLimits?: { maxPerApprover: number };
  /** How long the approval workflow retries each kind of activity (config.approvalPolicies). */
  approvalPolicies?: ApprovalPolicies;
  /** PUBLIC_BASE_URL: signed copies link to the signed file's permanent public URL under it. */
  publicBaseUrl?: string;
}

/** The defaults of APPROVAL_NOTIFY/FINALIZE/WRITE_RETRY_SECONDS: 6 h, 4 h, 1 h. */
export const DEFAULT_APPROVAL_POLICIES: ApprovalPolicies = {
  notifyMs: 6 * 3_600_000,
  finalizeMs: 4 * 3_600_000,
  writeMs: 3_600_000,
};

async function loadForWorkflow(db: Db, documentId: string, approverId?: string) {
  const document = await documentsStore(db).findByIdUnscoped(documentId, { forUpdate: true });
  if (!document)
    throw ApplicationFailure.nonRetryable(`Document ${documentId} does not exist`, 'document_missing');
  const approvers = await approversStore(db).listByDocument(documentId);
  const approver = approverId ? approvers.find((a) => a.id === approverId) : undefined;
  if (approverId && !approver) {
    throw ApplicationFailure.nonRetryable(
      `Approver ${approverId} is not on document ${documentId}`,
      'approver_missing',
    );
  }
  return { document, approvers, approver };
}

const eventData = (
  document: Document,
  approvers: readonly Approver[],
  approver?: Approver,
  documentExtra?: Record<string, unknown>,
) => ({
  document: { ...serializeDocument(document, approvers), ...documentExtra },
  ...(approver ? { approver: serializeApprover(approver) } : {}),
});

/**
 * The evidence row an action names (`evidenceId`), checked to be this approver's, for this action; undefined for
 * an action recorded before issue 13, which carries its evidence inline.
 */
async function actionEvidence(db: Db, input: RecordActionInput): Promise<StoredEvidence | undefined> {
  if (input.evidenceId === undefined) {
    if (input.evidence) return undefined;
    // An update by id taken by a workflow worker older than issue 13 (an API upgraded before its workers): that
    // code drops the id, so the action's row is the approver's latest one still submitted.
    const latest = await actionEvidenceStore(db).latestSubmitted(input.approverId, input.kind);
    if (latest && latest.documentId === input.documentId) return latest;
    throw ApplicationFailure.nonRetryable(
      `The evidence of approver ${input.approverId}'s action is missing`,
      'evidence_missing',
    );
  }
  const stored = await actionEvidenceStore(db).find(input.evidenceId);
  if (
    !stored ||
    stored.documentId !== input.documentId ||
    stored.approverId !== input.approverId ||
    stored.kind !== input.kind
  ) {
    throw ApplicationFailure.nonRetryable(
      `The evidence ${input.evidenceId} of approver ${input.approverId}'s action is missing`,
      'evidence_missing',
    );
  }
  return stored;
}

/** Signed copies are tried in the finalization's activity only with at least this long left of its time-outs. */
const COPIES_MIN_BUDGET_MS = 30_000;

/** What is left of the running activity's time-outs, less a margin of a quarter; unlimited outside an activity. */
function copiesBudgetMs(): number {
  let info: Context['info'];
  try {
    info = Context.current().info;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
  const now = Date.now();
  const ends = [
    info.scheduleToCloseTimeoutMs ? info.scheduledTimestampMs + info.scheduleToCloseTimeoutMs : Infinity,
    info.startToCloseTimeoutMs
      ? info.currentAttemptScheduledTimestampMs + info.startToCloseTimeoutMs
      : Infinity,
  ];
  return (Math.min(...ends) - now) * 0.75;
}

/** `work`, or a rejection once `ms` have passed (the work itself goes on; its sends are idempotent). */
function withinMs<T>(work: Promise<T>, ms: number): Promise<T> {
  if (!Number.isFinite(ms)) return work;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`the signed copies took longer than ${Math.round(ms)} ms`)),
      ms,
    );
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/**
 * The approval workflow's side effects. Each one is idempotent: its writes are guarded by the state they move
 * from, and its events are keyed, so a retry (or a replay after a crash) changes nothing the second time.
 */
export function createApprovalActivities(deps: ApprovalActivityDeps): ApprovalActivities {
  // A failure naming an approver (WhatsApp's answer may name the number) is redacted before Temporal keeps it.
  return withHistorySafeFailures(deps.db, approvalActivities(deps));
}

function approvalActivities(deps: ApprovalActivityDeps): ApprovalActivities {
  const { db } = deps;

  /** The events each `inTransaction` transaction recorded, by dedupe key: what it hands to delivery once committed. */
  const recordedIn = new WeakMap<Knex.Transaction, Map<string, DocumentEvent>>();

  /**
   * Runs `work` in a transaction, then hands the events named by `dedupeKeys` to delivery once committed —
   * whether this attempt recorded them or an earlier one did, so a retry after a failed hand-over still
   * delivers (delivery itself is idempotent).
   */
  async function inTransaction(
    dedupeKeys: string[],
    work: (trx: Knex.Transaction) => Promise<unknown>,
  ): Promise<void> {
    const recorded = new Map<string, DocumentEvent>();
    await db.transaction(async (trx) => {
      recordedIn.set(trx, recorded);
      await work(trx);
    });
    if (!deps.onEvent) return;
    for (const key of dedupeKeys) {
      // Recorded (or found recorded) by this attempt: no need to read it back.
      const event = recorded.get(key) ?? (await documentEventsStore(db).findByDedupeKey(key));
      if (event) await deps.onEvent(event);
    }
  }

  async function record(
    trx: Knex.Transaction,
    event: string,
    dedupeKey: string,
    document: Document,
    approver?: Approver,
    documentExtra?: Record<string, unknown>,
  ): Promise<DocumentEvent> {
    const approvers = await approversStore(trx).listByDocument(document.id);
    const current = approver ? approvers.find((a) => a.id === approver.id) : undefined;
    const recorded = await documentEventsStore(trx).record(
      {
        accountId: document.accountId,
        documentId: document.id,
        approverId: approver?.id ?? null,
        event,
        data: eventData(document, approvers, current, documentExtra),
        dedupeKey,
      },
      // Every caller's transaction holds the document's row already: it read it locked (loadForWorkflow,
      // finalization) or changed it (`transition`, an UPDATE, locks the row until commit). The approved event's
      // download and verification URLs are sealed.
      { documentLocked: true, secrets: deps.secrets },
    );
    recordedIn.get(trx)?.set(dedupeKey, recorded);
    return recorded;
  }

  /**
   * Marks the approver notified (once: only from `waiting`) and records `approver.notified` in the same
   * transaction — keyed per approver, so a retry or a later reminder records nothing more.
   */
  async function recordNotified(
    approverId: string,
    documentId: string,
    notification: { status: string; error: string | null },
  ): Promise<void> {
    const key = `approver.notified:${approverId}`;
    const event = await db.transaction(async (trx) => {
      const { document, approver } = await loadForWorkflow(trx, documentId, approverId);
      if (approver!.status !== 'waiting') return undefined;
      await approversStore(trx).markNotified(approverId, notification);
      // record() reads the approvers again, so the event carries this approver as notified.
      return record(trx, 'approver.notified', key, document, approver);
    });
    // Handed to delivery without waiting: the activity returns as soon as the approver reads notified, so the
    // workflow learns it at once (a reminder asked for right after sees them notified). An event whose hand-over
    // is lost goes out before the document's next event, or with the outbox sweep.
    if (event && deps.onEvent) {
      deps
        .onEvent(event)
        .catch((err: unknown) =>
          deps.logger.warn({ err, documentId }, 'approver.notified not dispatched yet'),
        );
    }
  }

  /**
   * Moves the document to `pending` for this workflow and records `document.sent`, once; false when the run was
   * ended instead (a send that never committed, the draft changed since).
   */
  async function markSent({ documentId, workflowId }: { documentId: string; workflowId: string }) {
    const key = `document.sent:${documentId}`;
    let sent = true;
    await inTransaction([key], async (trx) => {
      // Waits for the send's transaction: it holds this row lock until the document reads pending.
      const { document, approvers } = await loadForWorkflow(trx, documentId);
      if (document.status === 'draft') {
        // The send started this workflow and never committed (a crash, a lost connection). While this row lock
        // is held nothing can change the draft: move it here when it is still what the workflow started from.
        // When it was edited since, the workflow's approvers are not the document's: end this run (the send
        // never took effect) and leave a draft that can be sent again.
        const run = deps.workflowRun?.();
        if (run && !startedFrom(await run.input(), document, approvers)) {
          deps.logger.warn(
            { documentId, workflowId },
            'a send that never committed started this workflow, and the draft changed since: terminating it',
          );
          await run.terminate('The send that started this workflow did not commit; the draft changed since');
          sent = false;
          return;
        }
        const moved = await documentsStore(trx).transition(documentId, ['draft'], 'pending', {
          sentAt: new Date(),
          workflowId,
        });
        if (moved) {
          await approversStore(trx).issueLinkTokens(documentId, deps.secrets);
          await record(trx, 'document.sent', key, moved);
        }
        return;
      }
      // The send committed `pending` with this workflow: record its event, once (keyed; a retry finds it).
      if (document.workflowId === workflowId) await record(trx, 'document.sent', key, document);
    });
    return sent;
  }

  /**
   * Each approval request as notifyApprover, side by side; one that fails is reported as `failed` (nothing of the
   * failure: it may name the approver) and the workflow retries it with notifyApprover on its own policy.
   */
  function notifyEach(notices: NotifyApproverInput[]): Promise<BatchedNoticeResult[]> {
    return Promise.all(
      notices.map((notice) =>
        api.notifyApprover(notice).then(
          (result): BatchedNoticeResult => ({ result }),
          (err: unknown): BatchedNoticeResult => {
            deps.logger.warn(
              { err, approverId: notice.approverId },
              'an approval request failed; retried alone',
            );
            return { failed: true };
          },
        ),
      ),
    );
  }

  /** recordApproverAction, its failure typed ACTION_NOT_WRITTEN (same retryability). */
  async function writeAction(action: RecordActionInput): Promise<void> {
    try {
      await api.recordApproverAction(action);
    } catch (err) {
      throw ApplicationFailure.create({
        type: ACTION_NOT_WRITTEN,
        message: err instanceof Error ? err.message : String(err),
        nonRetryable: err instanceof ApplicationFailure && err.nonRetryable === true,
        cause: err instanceof Error ? err : undefined,
      });
    }
  }

  const api: ApprovalActivities = {
    approvalPolicies() {
      return Promise.resolve(deps.approvalPolicies ?? DEFAULT_APPROVAL_POLICIES);
    },

    async recordNotificationFailure(input: NotificationFailureInput) {
      deps.logger.warn(
        { documentId: input.documentId, approverId: input.approverId, kind: input.kind, error: input.error },
        'a WhatsApp notification exhausted its retry policy; the approver can be reminded',
      );
      if (input.kind !== 'approval_request') return;
      // Only from `waiting`: a notice that got through on an earlier attempt keeps its status.
      await recordNotified(input.approverId, input.documentId, { status: 'failed', error: input.error });
    },

    async markFinalizationFailed({ documentId, error, failedAt }) {
      const key = `document.finalization_failed:${documentId}:${failedAt}`;
      await inTransaction([key], async (trx) => {
        const { document } = await loadForWorkflow(trx, documentId);
        if (
          document.finalizationState === 'failed' &&
          document.finalizationFailedAt?.toISOString() === failedAt
        )
          return; // a retry: the first attempt recorded it
        const failed = await documentsStore(trx).transition(documentId, ['in_progress'], 'in_progress', {
          finalizationState: 'failed',
          finalizationError: error,
          finalizationFailedAt: new Date(failedAt),
        });
        if (!failed) return; // voided meanwhile
        deps.logger.error(
          { documentId, reference: failed.reference, error },
          'finalization failed for good: the document waits in_progress for documents:retry-finalization (or a void)',
        );
        await record(trx, 'document.finalization_failed', key, failed);
      });
    },

    async markDocumentSent(input) {
      await markSent(input);
    },

    async beginApproval({ documentId, workflowId, notices }) {
      // A run that markSent ended (its send never committed) asks nobody.
      const sent = await markSent({ documentId, workflowId });
      return { policies: await api.approvalPolicies(), notices: sent ? await notifyEach(notices) : [] };
    },

    async notifyApprovers({ notices }: { documentId: string; notices: NotifyApproverInput[] }) {
      return notifyEach(notices);
    },

    async notifyApprover(input: NotifyApproverInput) {
      const { document, approver } = await loadForWorkflow(db, input.documentId, input.approverId);
      const target = approver!;
      // Issued at send; a document sent before that rule gets it here, once (a retry reads the first one's).
      const linkToken =
        openLinkToken(target, deps.secrets) ??
        (await approversStore(db).ensureLinkToken(target.id, deps.secrets))!;
      const language = languageFor(target.phone, target.language);
      const notice = {
        kind: input.kind,
        accountId: document.accountId,
        documentId: document.id,
        approverId: target.id,
        phone: target.phone,
        language,
        approverName: language === 'ar' ? target.nameAr : target.nameEn,
        documentTitle: language === 'ar' ? document.titleAr : document.titleEn,
        reference: document.reference,
        linkToken,
        actionType: target.actionType,
        idempotencyKey: input.idempotencyKey,
      };
      const markNotified = async (notification: { status: string; error: string | null }) => {
        if (input.kind !== 'approval_request') return;
        await recordNotified(target.id, document.id, notification);
      };
      if (!target.notify) {
        // `notify: false`: the account shows this approver the page itself. Their turn has come all the same, so
        // they are marked notified (status `notified`, notification status `skipped`) and the workflow goes on;
        // no WhatsApp row is written, so reminders count none. Nothing personal goes into the result.
        await markNotified({ status: 'skipped', error: null });
        return { wamid: null, sent: false, skipped: true };
      }
      try {
        const { wamid } = await sendNotice(
          {
            provider: deps.whatsapp.provider,
            templates: deps.whatsapp.templates,
            messages: whatsAppMessagesStore(db),
            secrets: deps.secrets,
            // The outbox: WhatsApp's answer survives a failed record in the heartbeat, so a retry never re-sends.
            memory: heartbeatMemory(notice.idempotencyKey),
            recordRetry: deps.whatsapp.recordRetry,
            logger: deps.logger,
          },
          notice,
        );
        await markNotified({ status: 'accepted', error: null });
        return { wamid, sent: true };
      } catch (err) {
        if (isWhatsAppSendError(err) && !err.retryable) {
          // WhatsApp refused for good (say, a number not on WhatsApp): recorded, visible in the status, and the
          // approval goes on — the approver can still be given the link some other way.
          deps.logger.warn({ err, approverId: target.id }, 'WhatsApp refused a notification');
          await markNotified({ status: 'failed', error: err.message });
          // The result is kept in the workflow's history: the approver's number and name are not.
          return { wamid: null, sent: false, error: redact(err.message, personalData([target])) };
        }
        throw err; // retryable: Temporal tries again on the activity's policy
      }
    },

    async recordApproverAction(input: RecordActionInput) {
      const key =
        input.kind === 'complete'
          ? `approver.completed:${input.approverId}`
          : `document.rejected:${input.documentId}`;
      const rejectedKey = `approver.rejected:${input.approverId}`;
      const keys = input.kind === 'complete' ? [key] : [rejectedKey, key];
      await inTransaction(keys, async (trx) => {
        const { approver } = await loadForWorkflow(trx, input.documentId, input.approverId);
        if (hasActed(approver!.status)) return;
        const stored = await actionEvidence(trx, input);
        const e = stored?.evidence ?? input.evidence!;
        const acted = await approversStore(trx).update(approver!.id, {
          status: input.kind === 'complete' ? 'completed' : 'rejected',
          actedAt: new Date(e.at),
          actionChannel: e.channel,
          actionIp: e.ip ?? null,
          actionUserAgent: e.userAgent ?? null,
          actionMessageId: e.messageId ?? null,
          signatureKey: e.imageKey ?? null,
          typedName: e.typedName ?? null,
          rejectionReason: input.kind === 'reject' ? (e.reason ?? null) : null,
          // A reply in the approver's own WhatsApp chat proves their number (issue 15 item 2).
          verifiedBy: e.verifiedBy ?? (e.channel === 'whatsapp' ? 'whatsapp_reply' : 'none'),
        });
        if (e.generatedSeal) await approversStore(trx).markGeneratedSeal(approver!.id);
        if (stored) await actionEvidenceStore(trx).markAccepted(stored.id);

        if (input.kind === 'complete') {
          const document =
            (await documentsStore(trx).transition(input.documentId, ['pending'], 'in_progress')) ??
            (await documentsStore(trx).findByIdUnscoped(input.documentId))!;
          await record(trx, 'approver.completed', key, document, acted);
          return;
        }
        const open = (await documentsStore(trx).findByIdUnscoped(input.documentId))!;
        // The approver's own event first, with the document as it stood when they rejected; then the document's.
        await record(trx, 'approver.rejected', rejectedKey, open, acted);
        const document = await documentsStore(trx).transition(input.documentId, OPEN_STATUSES, 'rejected', {
          rejectionReason: e.reason ?? null,
          completedAt: new Date(e.at),
        });
        if (document) await record(trx, 'document.rejected', key, document, acted);
      });
    },

    async recordDelegation(input: RecordDelegationInput) {
      const key = `approver.delegated:${input.approverId}`;
      await inTransaction([key], async (trx) => {
        const { document, approver } = await loadForWorkflow(trx, input.documentId, input.approverId);
        const delegation = await delegationsStore(trx).find(input.delegationId);
        if (
          !delegation ||
          delegation.documentId !== input.documentId ||
          delegation.fromApproverId !== input.approverId ||
          delegation.delegateId !== input.delegateId
        ) {
          throw ApplicationFailure.nonRetryable(
            `The delegation ${input.delegationId} of approver ${input.approverId} is missing`,
            'delegation_missing',
          );
        }
        if (approver!.status === 'delegated') return; // a retry: the first attempt recorded it
        const delegate = await approversStore(trx).insertDelegate(approver!, {
          id: input.delegateId,
          name: delegation.name,
          phone: delegation.phone,
        });
        // Like every approver of a sent document, the delegate has a link from the start.
        await approversStore(trx).ensureLinkToken(delegate.id, deps.secrets);
        const delegated = await approversStore(trx).update(approver!.id, {
          status: 'delegated',
          actedAt: delegation.at,
          actionChannel: 'page',
          actionIp: delegation.ip,
          actionUserAgent: delegation.userAgent,
          verifiedBy: delegation.verifiedBy ?? 'none',
          delegatedToId: delegate.id,
          delegationReason: delegation.reason,
        });
        await delegationsStore(trx).markAccepted(delegation.id);
        const approvers = await approversStore(trx).listByDocument(document.id);
        // data.approver is who delegated (status delegated, delegated_to_id), data.delegate who takes the step.
        await documentEventsStore(trx).record({
          accountId: document.accountId,
          documentId: document.id,
          approverId: approver!.id,
          event: 'approver.delegated',
          data: {
            ...eventData(document, approvers, delegated),
            delegate: serializeApprover(delegate),
          },
          dedupeKey: key,
        });
      });
    },

    async markDocumentVoided({ documentId, at }) {
      const key = `document.voided:${documentId}`;
      await inTransaction([key], async (trx) => {
        const voided = await documentsStore(trx).transition(documentId, OPEN_STATUSES, 'voided', {
          completedAt: new Date(at),
        });
        if (voided) await record(trx, 'document.voided', key, voided);
      });
    },

    async markDocumentExpired({ documentId }) {
      const key = `document.expired:${documentId}`;
      await inTransaction([key], async (trx) => {
        const expired = await documentsStore(trx).transition(documentId, OPEN_STATUSES, 'expired', {
          completedAt: new Date(),
        });
        if (expired) await record(trx, 'document.expired', key, expired);
      });
    },

    async sendSignedCopies({ documentId, idempotencyPrefix }: SignedCopiesInput) {
      const document = await documentsStore(db).findByIdUnscoped(documentId);
      if (!document)
        throw ApplicationFailure.nonRetryable(`Document ${documentId} does not exist`, 'document_missing');
      const finalToken = openFinalToken(document, deps.secrets);
      if (document.status !== 'approved' || !finalToken || !deps.publicBaseUrl) {
        throw ApplicationFailure.nonRetryable(
          `Document ${documentId} has no signed file to send`,
          'no_signed_file',
        );
      }
      const file = {
        link: finalFileUrl(deps.publicBaseUrl, finalToken, document),
        filename: finalFilename(document),
      };
      const approvers = await approversStore(db).listByDocument(documentId);
      let sent = 0;
      let failed = 0;
      let retryable: Error | undefined;
      const sendCopy = async (
        notice: Pick<
          ApprovalNotice,
          'approverId' | 'phone' | 'language' | 'approverName' | 'idempotencyKey'
        > &
          Partial<Pick<ApprovalNotice, 'linkToken' | 'actionType'>>,
      ) => {
        try {
          await sendNotice(
            {
              provider: deps.whatsapp.provider,
              templates: deps.whatsapp.templates,
              messages: whatsAppMessagesStore(db),
              secrets: deps.secrets,
              recordRetry: deps.whatsapp.recordRetry,
              logger: deps.logger,
            },
            {
              kind: 'signed_copy',
              accountId: document.accountId,
              documentId: document.id,
              documentTitle: notice.language === 'ar' ? document.titleAr : document.titleEn,
              reference: document.reference,
              linkToken: '',
              actionType: 'approve_only',
              ...notice,
              document: file,
            },
          );
          sent++;
        } catch (err) {
          if (isWhatsAppSendError(err) && !err.retryable) {
            // Refused for good (recorded on the outbox row by sendNotice): the document is approved either way.
            deps.logger.warn({ err, approverId: notice.approverId }, 'WhatsApp refused a signed copy');
            failed++;
          } else {
            retryable ??= err instanceof Error ? err : new Error(String(err));
          }
        }
      };
      // An approver the account reaches itself (notify: false) gets no WhatsApp message, this one included.
      for (const approver of approvers.filter((a) => a.notify)) {
        const language = languageFor(approver.phone, approver.language);
        await sendCopy({
          approverId: approver.id,
          phone: approver.phone,
          language,
          approverName: language === 'ar' ? approver.nameAr : approver.nameEn,
          actionType: approver.actionType,
          idempotencyKey: `${idempotencyPrefix}:${approver.id}:signed_copy`,
        });
      }
      // The document's cc recipients (issue 15 item 5), keyed by their place in the list (fixed once sent). A
      // number that is also an approver's (an approver changed after cc was set) is the approver's: no second copy.
      const approverPhones = new Set(approvers.map((a) => a.phone));
      for (const [i, cc] of document.cc.entries()) {
        if (approverPhones.has(cc.phone)) continue;
        const language = languageFor(cc.phone, cc.language);
        await sendCopy({
          approverId: null,
          phone: cc.phone,
          language,
          approverName: cc.name ?? CC_GREETING[language],
          idempotencyKey: `${idempotencyPrefix}:cc:${i}:signed_copy`,
        });
      }
      // The others were tried first; the retry skips the copies already sent (same idempotency keys).
      if (retryable !== undefined) throw retryable;
      return { sent, failed };
    },

    async finalizeApprovedDocument({ documentId }) {
      const final = await whileHeartbeating(async () => deps.finalize?.(documentId));
      const key = `document.approved:${documentId}`;
      await inTransaction([key], async (trx) => {
        const current = await documentsStore(trx).findByIdUnscoped(documentId, { forUpdate: true });
        const approved = await documentsStore(trx).transition(documentId, OPEN_STATUSES, 'approved', {
          completedAt: final?.completedAt ?? new Date(),
          // A retried finalization that succeeded: the failure is over (its time stays as failed_at).
          ...(current?.finalizationState === 'failed' && { finalizationState: 'succeeded' as const }),
        });
        // The event carries the permanent download URL of the signed file (data.document.download_url).
        if (approved) await record(trx, 'document.approved', key, approved, undefined, final?.document);
      });
    },

    async finalizeAndSendSignedCopies(input: SignedCopiesInput) {
      await api.finalizeApprovedDocument({ documentId: input.documentId });
      // The copies never make the finalization time out: they get what is left of this activity's time-outs
      // (less a margin), and what does not fit goes to sendSignedCopies on its own policy.
      const budget = copiesBudgetMs();
      if (budget < COPIES_MIN_BUDGET_MS) return { copies: null, retryCopies: true };
      try {
        // Heartbeating as the finalization does: the activity's heartbeat time-out still applies.
        const copies = await whileHeartbeating(() => withinMs(api.sendSignedCopies(input), budget));
        return { copies, retryCopies: false };
      } catch (err) {
        const retryCopies = !(err instanceof ApplicationFailure && err.nonRetryable);
        deps.logger.warn(
          { err, documentId: input.documentId, retryCopies },
          'the signed copies did not go out with the finalization',
        );
        return { copies: null, retryCopies };
      }
    },

    async recordActionAndFinalize({ documentId, actions, idempotencyPrefix }: FinalActionInput) {
      for (const action of actions) await writeAction(action);
      return api.finalizeAndSendSignedCopies({ documentId, idempotencyPrefix });
    },

    async recordActionAndNotify({ action, notices }: ActionNoticesInput) {
      await writeAction(action);
      return notifyEach(notices);
    },

    async sendAutomaticReminder(input: NotifyApproverInput) {
      const maxPerApprover = deps.reminderLimits?.maxPerApprover ?? 5;
      // The manual remind's lock (remindWithinLimits): one reminder to an approver at a time, counted under it.
      return db.transaction(async (trx) => {
        await trx.raw('SELECT pg_advisory_xact_lock(?::int, hashtext(?))', [
          REMIND_LOCK_CLASS,
          input.approverId,
        ]);
        const document = await documentsStore(trx).findByIdUnscoped(input.documentId);
        const approver = document
          ? (await approversStore(trx).listByDocument(document.id)).find((a) => a.id === input.approverId)
          : undefined;
        if (!document || !approver || !isOpen(document.status))
          return { sent: false, skipped: 'closed' as const };
        if (approver.status !== 'notified') return { sent: false, skipped: 'acted' as const };
        // A retry of an attempt whose message went out finds its own row: it counts, but is this reminder.
        const mine = await whatsAppMessagesStore(trx).findByIdempotencyKey(input.idempotencyKey);
        if (!mine) {
          const history = await whatsAppMessagesStore(trx).reminderHistory(input.approverId);
          if (history.count >= maxPerApprover) return { sent: false, skipped: 'limit' as const };
        }
        const result = await api.notifyApprover({ ...input, kind: 'reminder' });
        return result.sent ? { sent: true } : { sent: false, skipped: 'refused' as const };
      });
    },
  };
  return api;
}
