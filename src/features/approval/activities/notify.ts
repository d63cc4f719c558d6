import { approversStore, openLinkToken } from '../../documents/approvers-store.ts';
import { documentsStore } from '../../documents/documents-store.ts';
import { whatsAppMessagesStore } from '../../../db/stores/whatsapp-messages-store.ts';
import { isWhatsAppSendError, languageFor, sendNotice } from '../../../whatsapp/index.ts';
import type {
  ApprovalActivities,
  BatchedNoticeResult,
  NotificationFailureInput,
  NotifyApproverInput,
} from '../definitions.ts';
import { withApprover } from '../../events/document-events.ts';
import { heartbeatMemory } from '../heartbeat-memory.ts';
import { personalData, redact } from '../history-safe.ts';
import { REMIND_LOCK_CLASS } from '../remind-approver.ts';
import { isOpen } from '../rules.ts';
import { type ActivityContext, approverOn, type LoadedDocument, loadForWorkflow } from './context.ts';

type Notification = { status: string; error: string | null };

/**
 * Marks each approver notified (once: only from `waiting`) and records their `approver.notified` in one
 * transaction — keyed per approver, so a retry or a later reminder records nothing more.
 */
async function recordNotified(
  { deps, events }: ActivityContext,
  documentId: string,
  notifications: ReadonlyMap<string, Notification>,
): Promise<void> {
  const recorded = await deps.db.transaction(async (trx) => {
    const loaded = await loadForWorkflow(trx, documentId);
    for (const approverId of notifications.keys()) approverOn(loaded, approverId); // not there: fails for good
    let approvers = loaded.approvers;
    const written = [];
    // In the approvers' order, so their events are numbered the same way however the sends finished.
    for (const approver of loaded.approvers) {
      const notification = notifications.get(approver.id);
      if (!notification || approver.status !== 'waiting') continue;
      // Under the document's row lock nothing else moves the approver: the row comes back notified.
      const notified = (await approversStore(trx).markNotified(approver.id, notification))!;
      approvers = withApprover(approvers, notified);
      written.push(
        await events.record(trx, {
          event: 'approver.notified',
          dedupeKey: `approver.notified:${approver.id}`,
          document: loaded.document,
          approver: notified,
          approvers,
        }),
      );
    }
    return written;
  });
  // Handed to delivery without waiting: the activity returns as soon as the approvers read notified, so the
  // workflow learns it at once (a reminder asked for right after sees them notified).
  for (const event of recorded) events.dispatchSoon(event, { documentId });
}

/** How a notice's outcome is recorded: at once on its own, or handed to the batch it was sent with. */
type RecordNotice = (notification: Notification) => Promise<void>;

/**
 * Sends the approver's notice, then records them notified. `loaded`: the document and its approvers as the
 * caller's transaction committed them just before (beginApproval), not read again for the send.
 */
async function notifyApprover(
  ctx: ActivityContext,
  input: NotifyApproverInput,
  loaded?: LoadedDocument,
  recordNotice?: RecordNotice,
) {
  const { deps } = ctx;
  const { document, approvers } = loaded ?? (await loadForWorkflow(deps.db, input.documentId));
  const target = approverOn({ document, approvers }, input.approverId);
  // Issued at send; a document sent before that rule gets it here, once (a retry reads the first one's).
  const linkToken =
    openLinkToken(target, deps.secrets) ??
    (await approversStore(deps.db).ensureLinkToken(target.id, deps.secrets))!;
  const language = languageFor(target.phone, target.language);
  const markNotified = async (notification: Notification) => {
    if (input.kind !== 'approval_request') return;
    if (recordNotice) await recordNotice(notification);
    else await recordNotified(ctx, document.id, new Map([[target.id, notification]]));
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
        messages: whatsAppMessagesStore(deps.db),
        secrets: deps.secrets,
        // The outbox: WhatsApp's answer survives a failed record in the heartbeat, so a retry never re-sends.
        memory: heartbeatMemory(input.idempotencyKey),
        recordRetry: deps.whatsapp.recordRetry,
        logger: deps.logger,
      },
      {
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
      },
    );
    await markNotified({ status: 'accepted', error: null });
    return { wamid, sent: true };
  } catch (err) {
    if (!isWhatsAppSendError(err) || err.retryable) throw err; // Temporal tries again on the activity's policy
    // WhatsApp refused for good (say, a number not on WhatsApp): recorded, visible in the status, and the
    // approval goes on — the approver can still be given the link some other way.
    deps.logger.warn({ err, approverId: target.id }, 'WhatsApp refused a notification');
    await markNotified({ status: 'failed', error: err.message });
    // The result is kept in the workflow's history: the approver's number and name are not.
    return { wamid: null, sent: false, error: redact(err.message, personalData([target])) };
  }
}

async function sendAutomaticReminder(ctx: ActivityContext, input: NotifyApproverInput) {
  const maxPerApprover = ctx.deps.reminderLimits?.maxPerApprover ?? 5;
  // The manual remind's lock (remindWithinLimits): one reminder to an approver at a time, counted under it.
  return ctx.deps.db.transaction(async (trx) => {
    await trx.raw('SELECT pg_advisory_xact_lock(?::int, hashtext(?))', [REMIND_LOCK_CLASS, input.approverId]);
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
    const result = await notifyApprover(ctx, { ...input, kind: 'reminder' });
    return result.sent ? { sent: true } : { sent: false, skipped: 'refused' as const };
  });
}

async function recordNotificationFailure(ctx: ActivityContext, input: NotificationFailureInput) {
  ctx.deps.logger.warn(
    { documentId: input.documentId, approverId: input.approverId, kind: input.kind, error: input.error },
    'a WhatsApp notification exhausted its retry policy; the approver can be reminded',
  );
  if (input.kind !== 'approval_request') return;
  // Only from `waiting`: a notice that got through on an earlier attempt keeps its status.
  await recordNotified(
    ctx,
    input.documentId,
    new Map([[input.approverId, { status: 'failed', error: input.error }]]),
  );
}

/**
 * Each approval request as notifyApprover, side by side, the approvers of one document then recorded notified in
 * one transaction; one that fails (its send, or the record of its document's batch) is reported as `failed`
 * (nothing of the failure: it may name the approver) and the workflow retries it with notifyApprover on its own
 * policy. `loaded`: the document as the caller just committed it, for the sends.
 */
export async function notifyEach(
  ctx: ActivityContext,
  notices: NotifyApproverInput[],
  loaded?: LoadedDocument,
): Promise<BatchedNoticeResult[]> {
  const due = new Map<string, Map<string, Notification>>();
  const sent = await Promise.all(notices.map((notice) => sendOne(ctx, notice, loaded, due)));
  const unrecorded = new Set<string>();
  for (const [documentId, notifications] of due) {
    try {
      await recordNotified(ctx, documentId, notifications);
    } catch (err) {
      ctx.deps.logger.warn({ err, documentId }, 'approval requests sent but not recorded; retried alone');
      for (const approverId of notifications.keys()) unrecorded.add(approverId);
    }
  }
  return sent.map((outcome, i) => (unrecorded.has(notices[i]!.approverId) ? { failed: true } : outcome));
}

/** One request of a batch, its outcome left in `due` (by document, then approver) to be recorded with the rest. */
function sendOne(
  ctx: ActivityContext,
  notice: NotifyApproverInput,
  loaded: LoadedDocument | undefined,
  due: Map<string, Map<string, Notification>>,
): Promise<BatchedNoticeResult> {
  const recordNotice: RecordNotice = (notification) => {
    const ofDocument = due.get(notice.documentId) ?? new Map<string, Notification>();
    due.set(notice.documentId, ofDocument.set(notice.approverId, notification));
    return Promise.resolve();
  };
  return notifyApprover(ctx, notice, loaded, recordNotice).then(
    (result): BatchedNoticeResult => ({ result }),
    (err: unknown): BatchedNoticeResult => {
      ctx.deps.logger.warn(
        { err, approverId: notice.approverId },
        'an approval request failed; retried alone',
      );
      return { failed: true };
    },
  );
}

type NotifyActivities = Pick<
  ApprovalActivities,
  'notifyApprover' | 'notifyApprovers' | 'sendAutomaticReminder' | 'recordNotificationFailure'
>;

/** The approvers' WhatsApp messages of the approval: requests, reminders, and the record of each. */
export function notifyActivities(ctx: ActivityContext): NotifyActivities {
  return {
    notifyApprover: (input) => notifyApprover(ctx, input),
    notifyApprovers: ({ notices }) => notifyEach(ctx, notices),
    sendAutomaticReminder: (input) => sendAutomaticReminder(ctx, input),
    recordNotificationFailure: (input) => recordNotificationFailure(ctx, input),
  };
}
