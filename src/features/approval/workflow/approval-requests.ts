import { CancellationScope, condition, isCancellation, log } from '@temporalio/workflow';
import type { BatchedNoticeResult, NotifyApproverInput, NotifyApproverResult } from '../definitions.ts';
import { acceptsActions, dueForNotification, notifiedApprovers } from './approval-state.ts';
import { batchLocally } from './effects.ts';
import { expiryNoticeTime, reminderTimes } from './reminder-schedule.ts';
import { failureMessage, type RunContext } from './run-context.ts';

type Send = () => Promise<NotifyApproverResult>;

/**
 * The approval requests of one run, and the automatic reminders of those it asked. Whoever becomes due is asked
 * once: in one local activity with the others due at the same moment, or by an activity that already sent it
 * (beginApproval, recordActionAndNotify: its outcome is `carried` here), or on its own; a request that fails there
 * goes again as the ordinary notifyApprover on the notify policy (same idempotency key, so WhatsApp gets it once).
 * A request that exhausts its policy is recorded on the approver, who counts as notified all the same (`remind`
 * sends it again).
 */
export class ApprovalRequests {
  /** Requests already sent by an activity that also did something else, by approver. */
  readonly carried = new Map<string, BatchedNoticeResult>();
  /** The delegates this run accepted: asked by the ordinary activity, which holds back no workflow task. */
  readonly delegates = new Set<string>();
  /** Delegates whose approver row is not written yet: asked once it is. */
  readonly held = new Set<string>();
  private readonly asking = new Set<string>();
  private readonly requests = new CancellationScope();
  private readonly reminders = new CancellationScope();

  /** `paused`: an accepted update's write has not settled, so nobody is asked yet. */
  constructor(
    private readonly run: RunContext,
    private readonly paused: () => boolean,
  ) {}

  requestOf(approverId: string): NotifyApproverInput {
    return {
      documentId: this.run.input.documentId,
      approverId,
      kind: 'approval_request',
      idempotencyKey: `${this.run.workflowId}:${approverId}:approval_request`,
    };
  }

  /** The approvers due whom nobody is asking yet. */
  undispatched(): string[] {
    if (this.paused()) return [];
    return dueForNotification(this.run.state)
      .filter((a) => !this.asking.has(a.id) && !this.held.has(a.id))
      .map((a) => a.id);
  }

  /** Asks each approver as they become due, until the document no longer accepts actions. */
  async dispatchWhileOpen(): Promise<void> {
    for (;;) {
      this.dispatch(this.undispatched());
      if (!acceptsActions(this.run.state)) return;
      await condition(() => !acceptsActions(this.run.state) || this.undispatched().length > 0);
    }
  }

  /** The document expired: requests still being retried are moot. */
  cancelRequests(): void {
    this.requests.cancel();
  }

  /** The document closed: requests still being retried and reminders still to come are moot. */
  cancel(): void {
    this.requests.cancel();
    this.reminders.cancel();
  }

  /** Who heard of the document: those notified, and those an action's own activity asked as it closed. */
  told(): string[] {
    const carriedSent = [...this.carried].flatMap(([id, outcome]) =>
      'result' in outcome && outcome.result.sent ? [id] : [],
    );
    return [...notifiedApprovers(this.run.state).map((a) => a.id), ...carriedSent];
  }

  private dispatch(due: string[]): void {
    const fresh = due.filter((id) => !this.carried.has(id) && !this.delegates.has(id));
    const sends = fresh.length > 1 ? this.batched(fresh) : [];
    for (const id of due) {
      if (this.carried.has(id)) this.start(id, this.sentAlready(id));
      else if (this.delegates.has(id))
        this.start(id, () => this.run.effects.notices.notifyApprover(this.requestOf(id)));
      else this.start(id, sends[fresh.indexOf(id)] ?? (() => this.run.effects.request(this.requestOf(id))));
    }
  }

  /** One local activity for the requests due together; each approver's outcome there, or a request on its own. */
  private batched(approverIds: string[]): Send[] {
    const inputs = approverIds.map((id) => this.requestOf(id));
    const batch = this.requests.run(() =>
      batchLocally.notifyApprovers({ documentId: this.run.input.documentId, notices: inputs }),
    );
    batch.catch(() => undefined); // each approver's request below handles it
    return inputs.map((request, i) => async () => {
      let outcome: BatchedNoticeResult | undefined;
      try {
        outcome = (await batch)[i];
      } catch (err) {
        if (isCancellation(err)) throw err;
      }
      return outcome && 'result' in outcome
        ? outcome.result
        : this.run.effects.notices.notifyApprover(request);
    });
  }

  /** A request an earlier activity carried: its result, or (it failed there) notifyApprover on its own. */
  private sentAlready(approverId: string): Send {
    const outcome = this.carried.get(approverId)!;
    this.carried.delete(approverId);
    return () =>
      'result' in outcome
        ? Promise.resolve(outcome.result)
        : this.run.effects.notices.notifyApprover(this.requestOf(approverId));
  }

  private start(approverId: string, send: Send): void {
    this.asking.add(approverId);
    void this.requests
      .run(async () => {
        try {
          await send();
        } catch (err) {
          if (isCancellation(err)) return;
          // Exhausted its policy: recorded on the approver (notification.status "failed"); they count as notified,
          // so POST /approvers/{id}/remind sends it again.
          const error = failureMessage(err);
          log.warn('an approval request exhausted its retry policy', { approverId, error });
          await this.run.durably('recordNotificationFailure', () =>
            this.run.effects.localWrites.recordNotificationFailure({
              documentId: this.run.input.documentId,
              approverId,
              kind: 'approval_request',
              error,
            }),
          );
        }
        this.run.notified(approverId);
        this.scheduleReminders(approverId, Date.now());
      })
      .catch((err: unknown) => {
        if (!isCancellation(err)) throw err;
      })
      .finally(() => this.asking.delete(approverId));
  }

  /** The approver still owes an action on an open document: their automatic reminders go on. */
  private awaitingAction(approverId: string): boolean {
    const { state } = this.run;
    return (
      acceptsActions(state) && state.approvers.some((a) => a.id === approverId && a.state === 'notified')
    );
  }

  /**
   * Durable timers for one approver's automatic reminders, from `notifiedAt` (workflow time): each waits for its
   * moment or for the approver to stop awaiting action (acted, or the document closed), whichever comes first.
   */
  private scheduleReminders(approverId: string, notifiedAt: number): void {
    const settings = this.run.input.reminders;
    if (!settings) return;
    const deadline = Date.parse(this.run.input.expiresAt);
    const moments = reminderTimes(settings, notifiedAt, deadline).map((at, i) => ({
      at,
      key: `auto:${i + 1}`,
    }));
    const expiryAt = expiryNoticeTime(settings, notifiedAt, deadline);
    if (expiryAt !== undefined) moments.push({ at: expiryAt, key: 'expires-tomorrow' });
    moments.sort((x, y) => x.at - y.at);
    void this.reminders
      .run(async () => {
        for (const { at, key } of moments) {
          const waitMs = at - Date.now();
          if (waitMs > 0 && (await condition(() => !this.awaitingAction(approverId), waitMs))) return;
          if (!this.awaitingAction(approverId)) return;
          await this.remindAutomatically(approverId, key);
        }
      })
      .catch((err: unknown) => {
        if (!isCancellation(err)) throw err;
      });
  }

  /** Through the notify path of `remind`; beyond REMIND_MAX_PER_APPROVER it is skipped, not sent. */
  private async remindAutomatically(approverId: string, key: string): Promise<void> {
    try {
      const result = await this.run.effects.notices.sendAutomaticReminder({
        documentId: this.run.input.documentId,
        approverId,
        kind: 'reminder',
        idempotencyKey: `${this.run.workflowId}:${approverId}:reminder:${key}`,
      });
      if (!result.sent) log.info('an automatic reminder was not sent', { approverId, key, ...result });
    } catch (err) {
      if (isCancellation(err)) throw err;
      log.warn('an automatic reminder exhausted its retry policy', {
        approverId,
        key,
        error: failureMessage(err),
      });
    }
  }
}
