import { z } from 'zod';
import { heartbeatSeconds } from './fields.ts';
import { defineSlice } from './slice.ts';

export interface ApprovalConfig {
  /**
   * How long the approval workflow retries each kind of activity (schedule-to-close) before its defined outcome,
   * and how long a finalization attempt after the first (a local activity) may go without a heartbeat before Temporal
   * gives it up and retries it.
   */
  approvalPolicies: { notifyMs: number; finalizeMs: number; writeMs: number; finalizeHeartbeatMs: number };
  /** How long the API waits for an approval workflow's answer before answering 503 (the answer is then lost). */
  approvalAnswerTimeoutMs: number;
  /** Per approver and document: a pause between reminders and a cap on how many. */
  reminders: { cooldownMs: number; maxPerApprover: number };
  /**
   * Automatic reminders: the default of accounts without their own (null when AUTO_REMIND_MAX is 0), and the
   * factor their hours are multiplied by when a document is sent — below 1 only in tests (APPROVAL_TIMER_SCALE).
   */
  autoReminders: {
    defaults: { first_after_hours: number; every_hours: number; max: number } | null;
    timerScale: number;
  };
}

const retrySeconds = (seconds: number, what: string) =>
  z.coerce.number().int().min(1).max(604_800).default(seconds).describe(what);
const hours = (what: string) => z.coerce.number().int().min(1).max(8_760).default(24).describe(what);

export const approvalSlice = defineSlice({
  title: 'Approval',
  about:
    "The approval workflow's activity policies (seconds retried before the activity's defined outcome), how long the API waits for the workflow's answer, and reminders.",
  env: {
    APPROVAL_NOTIFY_RETRY_SECONDS: retrySeconds(
      21_600,
      'how long one WhatsApp notification is retried; then the approver reads notification.status "failed", and a remind retries it',
    ),
    APPROVAL_FINALIZE_RETRY_SECONDS: retrySeconds(
      14_400,
      'how long finalization (the final PDF) is retried after a retryable failure, e.g. the signing certificate; then the document reads finalization.state "failed"',
    ),
    APPROVAL_WRITE_RETRY_SECONDS: retrySeconds(
      3_600,
      'how long a read-model write (PostgreSQL) is retried; then the workflow parks in "attention" until retried',
    ),
    APPROVAL_FINALIZE_HEARTBEAT_SECONDS: heartbeatSeconds(
      'how long a finalization attempt after the first may go without a heartbeat (every 5 s, or a third of this when shorter) before Temporal gives it up and retries it: how soon a worker killed mid-finalization is noticed (the first attempt is a local activity, given up with its workflow task after 10 s); below 30 only in tests',
    ),
    APPROVAL_ANSWER_TIMEOUT_SECONDS: z.coerce
      .number()
      .int()
      .min(1)
      .max(300)
      .default(20)
      .describe(
        "how long the API waits for Temporal's answer to a send, an action, a delegation, a void or a remind before a 503 (the answer is lost: asking again is safe)",
      ),
    REMIND_COOLDOWN_MINUTES: z.coerce
      .number()
      .min(0)
      .max(10_080)
      .default(60)
      .describe('the least time between two reminders to one approver (429 + Retry-After before it)'),
    REMIND_MAX_PER_APPROVER: z.coerce
      .number()
      .int()
      .min(1)
      .max(100)
      .default(5)
      .describe('the reminders one approver of one document can get (409 after that)'),
    AUTO_REMIND_FIRST_AFTER_HOURS: hours(
      "automatic reminders, for accounts and documents that set none of their own (accounts.default_reminders): hours from an approver's notification to the first",
    ),
    AUTO_REMIND_EVERY_HOURS: hours('hours between the next automatic reminders'),
    AUTO_REMIND_MAX: z.coerce
      .number()
      .int()
      .min(0)
      .max(100)
      .default(0)
      .describe('automatic reminders per approver (0: none by default); capped by REMIND_MAX_PER_APPROVER'),
    APPROVAL_TIMER_SCALE: z.coerce
      .number()
      .gt(0)
      .max(1)
      .default(1)
      .describe('tests only: multiplies reminder hours (and the 24 h expiry notice) when a document is sent'),
  },
  build: (e): ApprovalConfig => ({
    approvalPolicies: {
      notifyMs: e.APPROVAL_NOTIFY_RETRY_SECONDS * 1000,
      finalizeMs: e.APPROVAL_FINALIZE_RETRY_SECONDS * 1000,
      writeMs: e.APPROVAL_WRITE_RETRY_SECONDS * 1000,
      finalizeHeartbeatMs: e.APPROVAL_FINALIZE_HEARTBEAT_SECONDS * 1000,
    },
    approvalAnswerTimeoutMs: e.APPROVAL_ANSWER_TIMEOUT_SECONDS * 1000,
    reminders: {
      cooldownMs: Math.round(e.REMIND_COOLDOWN_MINUTES * 60_000),
      maxPerApprover: e.REMIND_MAX_PER_APPROVER,
    },
    autoReminders: {
      defaults:
        e.AUTO_REMIND_MAX > 0
          ? {
              first_after_hours: e.AUTO_REMIND_FIRST_AFTER_HOURS,
              every_hours: e.AUTO_REMIND_EVERY_HOURS,
              max: Math.min(e.AUTO_REMIND_MAX, e.REMIND_MAX_PER_APPROVER),
            }
          : null,
      timerScale: e.APPROVAL_TIMER_SCALE,
    },
  }),
});
