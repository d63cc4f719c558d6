import { describe, expect, it } from 'vitest';
import {
  effectiveReminders,
  expiryNoticeTime,
  reminderTimes,
  workflowReminders,
} from '../../src/features/approval/workflow/reminder-schedule.ts';

const H = 3_600_000;
const settings = (first_after_hours: number, every_hours: number, max: number) => ({
  first_after_hours,
  every_hours,
  max,
});

describe('automatic reminder schedule', () => {
  it('takes the document, else the account, else the configured default; max 0 is none', () => {
    const doc = settings(1, 2, 3);
    const account = settings(4, 5, 6);
    const configured = settings(7, 8, 1);
    expect(effectiveReminders(doc, account, configured)).toBe(doc);
    expect(effectiveReminders(null, account, configured)).toBe(account);
    expect(effectiveReminders(null, null, configured)).toBe(configured);
    expect(effectiveReminders(null, null, null)).toBeNull();
    expect(effectiveReminders(settings(1, 1, 0), account, configured)).toBeNull();
  });

  it('turns hours into milliseconds for the workflow input, scaled only when asked', () => {
    expect(workflowReminders(settings(2, 3, 4))).toEqual({
      firstAfterMs: 2 * H,
      everyMs: 3 * H,
      max: 4,
      expiryNoticeMs: 24 * H,
    });
    expect(workflowReminders(settings(1, 1, 2), 1 / 3600)).toEqual({
      firstAfterMs: 1000,
      everyMs: 1000,
      max: 2,
      expiryNoticeMs: 24_000,
    });
    expect(workflowReminders(null)).toBeUndefined();
    expect(workflowReminders(settings(1, 1, 0))).toBeUndefined();
  });

  it('schedules max reminders from the notification, none at or after the deadline', () => {
    const r = workflowReminders(settings(24, 12, 3))!;
    const t0 = Date.UTC(2026, 0, 1);
    expect(reminderTimes(r, t0, t0 + 30 * 24 * H)).toEqual([t0 + 24 * H, t0 + 36 * H, t0 + 48 * H]);
    expect(reminderTimes(r, t0, t0 + 36 * H)).toEqual([t0 + 24 * H]);
    expect(reminderTimes(r, t0, t0 + 24 * H)).toEqual([]);
  });

  it('sends "expires tomorrow" 24 hours before the deadline, only to an approver notified before that', () => {
    const r = workflowReminders(settings(1, 1, 1))!;
    const deadline = Date.UTC(2026, 0, 8);
    expect(expiryNoticeTime(r, deadline - 7 * 24 * H, deadline)).toBe(deadline - 24 * H);
    expect(expiryNoticeTime(r, deadline - 24 * H, deadline)).toBeUndefined();
    expect(expiryNoticeTime(r, deadline - 2 * H, deadline)).toBeUndefined();
  });
});
