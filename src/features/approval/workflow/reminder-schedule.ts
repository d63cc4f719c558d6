import type { ReminderSettings } from '../../../domain/model.ts';
import type { WorkflowReminders } from '../definitions.ts';

const HOUR_MS = 3_600_000;
/** The "expires tomorrow" reminder goes this long before the deadline. */
export const EXPIRY_NOTICE_HOURS = 24;

/**
 * The reminders a document is sent with: its own setting, else its account's default, else the configured
 * default (AUTO_REMIND_*; null when AUTO_REMIND_MAX is 0). `max: 0` anywhere in that order means none.
 */
export function effectiveReminders(
  document: ReminderSettings | null,
  account: ReminderSettings | null,
  configured: ReminderSettings | null,
): ReminderSettings | null {
  const chosen = document ?? account ?? configured;
  return chosen && chosen.max > 0 ? chosen : null;
}

/**
 * The settings as the workflow input carries them: numbers only, hours turned into milliseconds and multiplied
 * by `scale` (APPROVAL_TIMER_SCALE, 1 outside tests), so the workflow never reads configuration.
 */
export function workflowReminders(
  settings: ReminderSettings | null,
  scale = 1,
): WorkflowReminders | undefined {
  if (!settings || settings.max <= 0) return undefined;
  const ms = (hours: number) => Math.max(1, Math.round(hours * HOUR_MS * scale));
  return {
    firstAfterMs: ms(settings.first_after_hours),
    everyMs: ms(settings.every_hours),
    max: settings.max,
    expiryNoticeMs: ms(EXPIRY_NOTICE_HOURS),
  };
}

/**
 * When an approver notified at `notifiedAt` (workflow time, ms) gets each automatic reminder: `max` times, the
 * first `firstAfterMs` after the notification, then every `everyMs`, all before `deadline`.
 */
export function reminderTimes(r: WorkflowReminders, notifiedAt: number, deadline: number): number[] {
  const times: number[] = [];
  for (let i = 0; i < r.max; i++) {
    const at = notifiedAt + r.firstAfterMs + i * r.everyMs;
    if (at >= deadline) break;
    times.push(at);
  }
  return times;
}

/**
 * The "expires tomorrow" reminder's time, or undefined when the approver was notified less than
 * `expiryNoticeMs` before the deadline (they were just told; a reminder would add nothing).
 */
export function expiryNoticeTime(
  r: WorkflowReminders,
  notifiedAt: number,
  deadline: number,
): number | undefined {
  const at = deadline - r.expiryNoticeMs;
  return at > notifiedAt ? at : undefined;
}
