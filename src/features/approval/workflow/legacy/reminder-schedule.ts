import type { WorkflowReminders } from './definitions.ts';

/** When each automatic reminder goes: `max` of them, the first `firstAfterMs` after the notice, all before the deadline. */
export function reminderTimes(r: WorkflowReminders, notifiedAt: number, deadline: number): number[] {
  const times: number[] = [];
  for (let i = 0; i < r.max; i++) {
    const at = notifiedAt + r.firstAfterMs + i * r.everyMs;
    if (at >= deadline) break;
    times.push(at);
  }
  return times;
}

/** The "expires tomorrow" reminder's time, unless the approver was notified later than that. */
export function expiryNoticeTime(
  r: WorkflowReminders,
  notifiedAt: number,
  deadline: number,
): number | undefined {
  const at = deadline - r.expiryNoticeMs;
  return at > notifiedAt ? at : undefined;
}
