import type { Config } from '../../config.ts';
import type { Knex } from '../../db/knex.ts';
import { approversStore } from '../documents/approvers-store.ts';
import { documentsStore } from '../documents/documents-store.ts';
import { whatsAppMessagesStore, type ReminderHistory } from '../../db/stores/whatsapp-messages-store.ts';
import { isoTime } from '../../domain/time.ts';
import { statusRefusal } from '../documents/rules.ts';
import { AppError } from '../../errors.ts';
import { ApprovalRefused, type ApprovalDeps } from './client.ts';
import { isOpen } from './rules.ts';

export interface Reminder {
  approver_id: string;
  reminded_at: string;
  whatsapp_message_id: string | null;
}

/** What reminding needs beyond the approval services: the limits (REMIND_COOLDOWN_MINUTES, REMIND_MAX_PER_APPROVER). */
export interface RemindDeps extends ApprovalDeps {
  config: Pick<Config, 'reminders'>;
}

/**
 * Re-sends the current WhatsApp notification to an approver who was notified and has not acted
 * (docs/product-rules.md §4); 409 otherwise. The workflow sends it, so a reminder never races an action.
 * Within the reminder limits: 409 once the approver has had the most reminders allowed, 429 with Retry-After
 * when the last one went too recently (see `remindWithinLimits`).
 */
export async function remindApprover(
  deps: RemindDeps,
  accountId: string,
  approverId: string,
): Promise<Reminder> {
  const approver = await approversStore(deps.db).findById(accountId, approverId);
  if (!approver) throw AppError.notFound('Approver');
  const document = (await documentsStore(deps.db).findByIdUnscoped(approver.documentId))!;
  if (!isOpen(document.status)) {
    throw AppError.conflict(
      'document_closed',
      statusRefusal(document, 'reminders go only to approvers of a pending or in-progress document'),
    );
  }
  if (approver.status !== 'notified') {
    throw AppError.conflict(
      approver.status === 'waiting' ? 'approver_not_notified' : 'approver_already_acted',
      approver.status === 'waiting'
        ? 'This approver has not been notified yet (it is not their turn); nothing to remind'
        : `This approver has already acted (${approver.status}); nothing to remind`,
    );
  }
  if (!approver.notify) {
    throw AppError.conflict(
      'approver_not_notifiable',
      'This approver gets no WhatsApp messages (notify: false); show them their link (GET /approvers/{id}/link)',
    );
  }
  let wamid: string | null;
  try {
    ({ wamid } = await remindWithinLimits(deps.db, approver.id, deps.config.reminders, () =>
      onceTheWorkflowHasCaughtUp(() => deps.approvals.remind(document.id, approver.id)),
    ));
  } catch (err) {
    if (err instanceof ApprovalRefused)
      throw AppError.conflict('action_refused', `Cannot remind: ${err.message}`);
    throw err;
  }
  return { approver_id: approver.id, reminded_at: isoTime(new Date()), whatsapp_message_id: wamid };
}

/** How long a reminder waits for the workflow to take a notification the read model already shows. */
export const CATCH_UP_MS = 5_000;

/**
 * The notification activity writes `notified` to the read model just before it returns; the workflow marks the
 * approver notified when it takes that result, a workflow task later. A reminder asked for in between is refused
 * as `not_notified` although the approver has their message. That window is the service's, not the caller's:
 * the reminder is asked again (50 ms, doubling) for up to CATCH_UP_MS, and only then refused.
 */
export async function onceTheWorkflowHasCaughtUp<T>(
  remind: () => Promise<T>,
  catchUpMs = CATCH_UP_MS,
): Promise<T> {
  const giveUpAt = Date.now() + catchUpMs;
  for (let wait = 50; ; wait = Math.min(wait * 2, 1_000)) {
    try {
      return await remind();
    } catch (err) {
      if (!(err instanceof ApprovalRefused) || err.refusal !== 'not_notified' || Date.now() + wait > giveUpAt)
        throw err;
    }
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
}

export interface ReminderLimits {
  /** Least time between two reminders to one approver; 0 for none. */
  cooldownMs: number;
  /** Reminders one approver of one document can get. */
  maxPerApprover: number;
}

/**
 * First key of the advisory locks taken here ('REM'), so they cannot meet a lock taken for another purpose;
 * the second is a hash of the approver id (a collision only makes two approvers' reminders take turns).
 */
export const REMIND_LOCK_CLASS = 0x52454d;

const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

function duration(ms: number): string {
  if (ms >= 60_000 && ms % 60_000 === 0) return ms === 60_000 ? '1 minute' : `${ms / 60_000} minutes`;
  const s = seconds(ms);
  return s === 1 ? '1 second' : `${s} seconds`;
}

function tooSoon(message: string, waitMs: number): AppError {
  return new AppError('reminder_too_soon', message, {}, { 'Retry-After': String(seconds(waitMs)) });
}

/** The refusal the limits give for an approver's recorded reminders, or undefined when one more may go. */
export function reminderRefusal(history: ReminderHistory, limits: ReminderLimits): AppError | undefined {
  if (history.count >= limits.maxPerApprover) {
    return AppError.conflict(
      'reminder_limit_reached',
      `This approver has been reminded ${history.count} ${history.count === 1 ? 'time' : 'times'}; ` +
        `at most ${limits.maxPerApprover} reminders go to one approver of a document`,
    );
  }
  if (history.lastAt && limits.cooldownMs > 0) {
    const next = new Date(history.lastAt.getTime() + limits.cooldownMs);
    const waitMs = next.getTime() - history.now.getTime();
    if (waitMs > 0) {
      return tooSoon(
        `Reminders to one approver are at least ${duration(limits.cooldownMs)} apart; the last one went at ` +
          `${isoTime(history.lastAt)}, the next is allowed at ${isoTime(next)}`,
        waitMs,
      );
    }
  }
  return undefined;
}

/**
 * Runs `remind` (the workflow's remind update) when the approver's recorded reminders allow one more, and
 * throws a 409 (cap reached) or a 429 with Retry-After (too soon) otherwise.
 *
 * The reminders counted are the rows the notification activity writes in `whatsapp_messages`; the row of a
 * reminder exists only once the update has returned. So the check and the update run under one transaction-level
 * advisory lock per approver, held until the update has answered: of two concurrent reminds, the second finds
 * the lock taken and is refused at once (429) rather than waiting, so a burst holds no more connections than
 * there are approvers being reminded. An advisory lock and not a row lock: the workflow's activities lock and
 * update the document and approver rows while the update runs, and must not wait on this request.
 */
export async function remindWithinLimits<T>(
  db: Knex,
  approverId: string,
  limits: ReminderLimits,
  remind: () => Promise<T>,
): Promise<T> {
  return db.transaction(async (trx) => {
    const lock = await trx.raw<{ rows: { locked: boolean }[] }>(
      'SELECT pg_try_advisory_xact_lock(?::int, hashtext(?)) AS locked',
      [REMIND_LOCK_CLASS, approverId],
    );
    if (!lock.rows[0]?.locked) {
      throw tooSoon(
        limits.cooldownMs > 0
          ? `A reminder to this approver is being sent right now; reminders to one approver are at least ` +
              `${duration(limits.cooldownMs)} apart`
          : 'A reminder to this approver is being sent right now; try again once it has gone',
        limits.cooldownMs,
      );
    }
    const refusal = reminderRefusal(await whatsAppMessagesStore(trx).reminderHistory(approverId), limits);
    if (refusal) throw refusal;
    return remind();
  });
}
