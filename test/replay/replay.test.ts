import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ensureTestTemporalRuntime } from '../helpers/temporal-runtime.ts';
import { workflowsPath } from '../../src/temporal/worker.ts';
import { PATCHES } from '../../src/features/approval/workflow/legacy/approval-workflow.ts';
import { recordedHistories, replayRecorded } from '../helpers/histories.ts';

// The expected nondeterminism below would otherwise be logged as warnings.
ensureTestTemporalRuntime();

const HISTORIES = path.resolve(import.meta.dirname, '../histories');
/**
 * One directory per version of the workflow code that recorded them: test/histories itself holds the runs of the
 * code before the first patch (v1), test/histories/v2 those of the code with the recovery patches (record-histories.test.ts),
 * test/histories/v3 those whose actions carry the id of their evidence row instead of the evidence,
 * test/histories/v4 those of the leaner workflow (patch `approval-lean-v1`: local activities for the
 * read-model writes, finalization and signed copies in one activity), test/histories/v5 those of patch
 * `approval-lean-v2` (approval requests as local activities too; a write that closes the document from an update an
 * ordinary activity again), test/histories/v6 those of patch `approval-lean-v3` (an accepted action or delegation
 * touches nothing outside the workflow before its acceptance is in the history), test/histories/v7 those of patch
 * `approval-lean-v4` (that write an ordinary activity scheduled by the task that accepts the update, no timer),
 * test/histories/v8 those of patch `approval-lean-v5` (the only patch asked; one activity where two followed each
 * other: the send, the policies and the first requests; an action and the requests it made due; the last action
 * and the finalization).
 * test/histories/document-approval holds runs of `documentApproval`, the workflow new documents start since Worker
 * Versioning (no patches: a run stays on the worker version that started it); the sets before are runs of the
 * legacy type `approvalWorkflow`, which the same bundle still registers.
 * A recorded history is never re-recorded: each set proves that runs of its code replay through today's code.
 */
const SETS = ['', 'v2', 'v3', 'v4', 'v5', 'v6', 'v7', 'v8', 'v9', 'document-approval'];
/** The v4 set (test/replay/record-histories.test.ts, VERSION v4). */
const V4 = [
  'v4/attention-retried-expired',
  'v4/expired',
  'v4/finalization-retried-approved',
  'v4/parallel-approved',
  'v4/rejected',
  'v4/voided',
];
/** The v5 set (test/replay/record-histories.test.ts, VERSION v5). */
const V5 = [
  'v5/attention-retried-expired',
  'v5/auto-reminders-voided',
  'v5/delegated-approved',
  'v5/expired',
  'v5/finalization-failed-voided',
  'v5/finalization-retried-approved',
  'v5/notification-failed-expired',
  'v5/parallel-approved',
  'v5/rejected',
  'v5/sequential-approved',
  'v5/signing-groups-approved',
  'v5/voided',
];
/** The v6 set (test/replay/record-histories.test.ts, VERSION v6): the same scenarios as v5. */
const V6 = V5.map((name) => name.replace(/^v5/, 'v6'));
/** The v7 set (VERSION v7): the same scenarios again. */
const V7 = V5.map((name) => name.replace(/^v5/, 'v7'));
/** The v8 set (VERSION v8): the same scenarios again. */
const V8 = V5.map((name) => name.replace(/^v5/, 'v8'));
/** The v9 set (VERSION v9): only the run whose commands changed (approval-delegate-request-v1). */
const V9 = ['v9/delegated-approved'];
/** The runs of `documentApproval` (VERSION document-approval): the v5 scenarios. */
const DOCUMENT_APPROVAL = V5.map((name) => name.replace(/^v5/, 'document-approval'));
const EXPECTED = [
  'expired',
  'parallel-approved',
  'rejected',
  'sequential-approved',
  'voided',
  'v2/attention-retried-expired',
  'v2/expired',
  'v2/finalization-failed-voided',
  'v2/finalization-retried-approved',
  'v2/notification-failed-expired',
  'v2/parallel-approved',
  'v2/rejected',
  'v2/sequential-approved',
  'v2/voided',
  'v3/auto-reminders-voided',
  'v3/delegated-approved',
  'v3/parallel-approved',
  'v3/rejected',
  'v3/sequential-approved',
  'v3/signing-groups-approved',
  ...V4,
  ...V5,
  ...V6,
  ...V7,
  ...V8,
  ...V9,
  ...DOCUMENT_APPROVAL,
];

const recorded = () => recordedHistories(HISTORIES, SETS);
const replayAll = async (workflows: string) => replayRecorded(HISTORIES, await recorded(), workflows);

describe('replaying recorded approval histories', () => {
  it('the committed histories cover the main paths, of the old code and of the current one', async () => {
    expect(await recorded()).toEqual(EXPECTED);
  });

  /** The patches each set's code took, in the order it took them (v4: the signed copies once approved). */
  const expectedPatches = (name: string): string[] => {
    if (!/^v\d\//.test(name)) return [];
    // approval-lean-v5 implies every patch before it: a workflow that took it asks no other.
    if (name.startsWith('v8/')) return [PATCHES.leanV5];
    // Asked where the delegate is first due.
    if (name.startsWith('v9/')) return [PATCHES.leanV5, PATCHES.delegateRequest];
    const v4 = name.startsWith('v4/');
    const v5 = name.startsWith('v5/');
    const v6 = name.startsWith('v6/');
    const v7 = name.startsWith('v7/');
    // Recorded after signed copies: their approved documents took that patch too.
    const grouped = /^v[3567]\/signing-groups/.test(name);
    const delegated = /^v[3567]\/delegated/.test(name);
    return [
      PATCHES.recovery,
      ...(name.includes('auto-reminders') ? [PATCHES.autoReminders] : []),
      ...(grouped ? [PATCHES.signingGroups] : []),
      ...(v5 ? [PATCHES.leanV2] : []),
      ...(v6 ? [PATCHES.leanV3] : []),
      ...(v7 ? [PATCHES.leanV4] : []),
      ...(delegated ? [PATCHES.delegation] : []),
      ...(v4 ? [PATCHES.lean] : []),
      ...((v4 || v5 || v6 || v7 || grouped || delegated) && name.endsWith('-approved')
        ? [PATCHES.signedCopies]
        : []),
    ];
  };

  it('each set is of the workflow type that recorded it: documentApproval for the newest, the legacy type before', async () => {
    for (const name of await recorded()) {
      const { events } = JSON.parse(await readFile(path.join(HISTORIES, `${name}.json`), 'utf8')) as {
        events: { workflowExecutionStartedEventAttributes?: { workflowType: { name: string } } }[];
      };
      const type = events[0]!.workflowExecutionStartedEventAttributes!.workflowType.name;
      expect(type, name).toBe(
        name.startsWith('document-approval/') ? 'documentApproval' : 'approvalWorkflow',
      );
    }
  });

  it('each set took the patches of the code that recorded it, the old set none', async () => {
    for (const name of await recorded()) {
      const { events } = JSON.parse(await readFile(path.join(HISTORIES, `${name}.json`), 'utf8')) as {
        events: {
          markerRecordedEventAttributes?: { markerName: string; details: Record<string, unknown> };
        }[];
      };
      const patches = events
        .filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_patch')
        .map((e) => {
          const data = (
            e.markerRecordedEventAttributes!.details['patch-data'] as { payloads: { data: string }[] }
          ).payloads[0]!.data;
          return (JSON.parse(Buffer.from(data, 'base64').toString('utf8')) as { id: string }).id;
        });
      expect(patches, name).toEqual(expectedPatches(name));
    }
  });

  it('actions carry their evidence inline up to v2, and only the id of its stored row from v3 on (signalled by documentApproval)', async () => {
    for (const name of await recorded()) {
      const { events } = JSON.parse(await readFile(path.join(HISTORIES, `${name}.json`), 'utf8')) as {
        events: {
          workflowExecutionUpdateAcceptedEventAttributes?: {
            acceptedRequest: { input: { name: string; args?: { payloads?: { data: string }[] } } };
          };
          workflowExecutionSignaledEventAttributes?: {
            signalName: string;
            input?: { payloads?: { data: string }[] };
          };
        }[];
      };
      // documentApproval follows actions the API recorded (the actionRecorded signal); earlier runs took `act`.
      const payloads = events.flatMap((e) => {
        const update = e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest.input;
        if (update?.name === 'act') return [update.args!.payloads![0]!.data];
        const signal = e.workflowExecutionSignaledEventAttributes;
        if (signal?.signalName === 'actionRecorded') return [signal.input!.payloads![0]!.data];
        return [];
      });
      const acts = payloads.map(
        (data) => JSON.parse(Buffer.from(data, 'base64').toString('utf8')) as Record<string, unknown>,
      );
      if (!/approved|rejected/.test(name)) continue;
      expect(acts.length, name).toBeGreaterThan(0);
      for (const act of acts) {
        if (/^(v[3-9]|document-approval)\//.test(name)) {
          expect(typeof act.evidenceId, name).toBe('string');
          expect(act, name).not.toHaveProperty('evidence');
        } else expect(typeof (act.evidence as { at?: unknown } | undefined)?.at, name).toBe('string');
      }
    }
  });

  it('v4 makes its read-model writes local activities and finalizes with the signed copies in one activity', async () => {
    const historyOf = async (name: string) =>
      (
        JSON.parse(await readFile(path.join(HISTORIES, `${name}.json`), 'utf8')) as {
          events: {
            eventType: string;
            activityTaskScheduledEventAttributes?: { activityType: { name: string } };
            markerRecordedEventAttributes?: { markerName: string };
          }[];
        }
      ).events;
    const WRITES = [
      'markDocumentSent',
      'recordApproverAction',
      'markDocumentVoided',
      'markDocumentExpired',
      'markFinalizationFailed',
      'recordNotificationFailure',
    ];
    for (const name of V4) {
      const events = await historyOf(name);
      const scheduled = events.flatMap(
        (e) => e.activityTaskScheduledEventAttributes?.activityType.name ?? [],
      );
      // Only a write whose local attempts failed (the fault of attention-retried-expired) is an activity task.
      expect(
        scheduled.filter((a) => WRITES.includes(a)),
        name,
      ).toEqual(name.includes('attention') ? ['markDocumentExpired'] : []);
      expect(scheduled, name).not.toContain('finalizeApprovedDocument');
      if (name.endsWith('-approved')) expect(scheduled, name).toContain('finalizeAndSendSignedCopies');
      // markDocumentSent at least, as a local activity
      expect(
        events.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity').length,
        name,
      ).toBeGreaterThanOrEqual(2);
    }
    // The same run (two approvers at once and a reminder, recorded by the same test) before and after.
    const count = (events: { eventType: string }[], type: string) =>
      events.filter((e) => e.eventType === `EVENT_TYPE_${type}`).length;
    const [v3, v4] = await Promise.all([
      historyOf('v3/parallel-approved'),
      historyOf('v4/parallel-approved'),
    ]);
    expect(count(v4, 'WORKFLOW_TASK_STARTED')).toBeLessThan(count(v3, 'WORKFLOW_TASK_STARTED'));
    expect(count(v4, 'ACTIVITY_TASK_SCHEDULED')).toBeLessThan(count(v3, 'ACTIVITY_TASK_SCHEDULED'));
    expect(v4.length).toBeLessThan(v3.length);
  });

  it('v5 (approval-lean-v2) asks for approval requests as local activities, closes from an update through an ordinary activity, and does less than v4', async () => {
    const historyOf = async (name: string) =>
      (
        JSON.parse(await readFile(path.join(HISTORIES, `${name}.json`), 'utf8')) as {
          events: {
            eventType: string;
            activityTaskScheduledEventAttributes?: { activityType: { name: string } };
          }[];
        }
      ).events;
    const scheduledIn = (events: Awaited<ReturnType<typeof historyOf>>) =>
      events.flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType.name ?? []);
    // Where WhatsApp answers and nobody reminds or voids, no activity task but the finalization (and a delegation).
    // (sendSignedCopies too here: the recorder's 10 s finalization time-out leaves the copies less than the 30 s
    // they need inside finalizeAndSendSignedCopies, so they go on their own.)
    for (const name of ['v5/sequential-approved', 'v5/signing-groups-approved', 'v5/delegated-approved']) {
      const scheduled = scheduledIn(await historyOf(name)).filter((n) => n !== 'sendSignedCopies');
      expect(scheduled, name).toEqual(
        name.includes('delegated')
          ? ['recordDelegation', 'finalizeAndSendSignedCopies']
          : ['finalizeAndSendSignedCopies'],
      );
    }
    // The write that closes the document from an update is an ordinary activity: its acceptance is recorded in a
    // workflow task of its own, before the one that completes the workflow.
    expect(scheduledIn(await historyOf('v5/rejected'))).toEqual(['recordApproverAction']);
    expect(scheduledIn(await historyOf('v5/voided'))).toContain('markDocumentVoided');
    // A request whose local attempt fails is handed to the ordinary activity (the notify policy retries it).
    expect(scheduledIn(await historyOf('v5/notification-failed-expired'))).toContain('notifyApprover');
    const count = (events: { eventType: string }[], type: string) =>
      events.filter((e) => e.eventType === `EVENT_TYPE_${type}`).length;
    // The same runs (recorded by the same scenarios) before the lean patches: v3, or v2 where v3 has none.
    for (const name of [
      'v3/sequential-approved',
      'v3/parallel-approved',
      'v3/rejected',
      'v2/voided',
      'v2/expired',
    ]) {
      const [v3, v5] = await Promise.all([historyOf(name), historyOf(name.replace(/^v\d/, 'v5'))]);
      expect(count(v5, 'WORKFLOW_TASK_STARTED'), name).toBeLessThan(count(v3, 'WORKFLOW_TASK_STARTED'));
      expect(count(v5, 'ACTIVITY_TASK_SCHEDULED'), name).toBeLessThan(count(v3, 'ACTIVITY_TASK_SCHEDULED'));
      expect(v5.length, name).toBeLessThan(v3.length);
    }
  });

  /** What a history's events carry that the checks below read. */
  interface Event {
    eventType: string;
    markerRecordedEventAttributes?: { markerName: string };
    activityTaskScheduledEventAttributes?: { activityType: { name: string } };
    workflowExecutionUpdateAcceptedEventAttributes?: {
      acceptedRequest: { input: { name: string; args?: { payloads?: { data: string }[] } } };
    };
  }
  /** The acceptance of an act (not a rejection, whose write was always an ordinary activity) or a delegate. */
  const acceptsEffectful = (e: Event) => {
    const input = e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest.input;
    if (input?.name === 'delegate') return true;
    if (input?.name !== 'act') return false;
    const arg = JSON.parse(Buffer.from(input.args!.payloads![0]!.data, 'base64').toString('utf8')) as {
      kind: string;
    };
    return arg.kind !== 'reject';
  };
  /** What the completion of each workflow task that accepted an act (not a rejection) or a delegate recorded. */
  const accepting = async (name: string) => {
    const { events } = JSON.parse(await readFile(path.join(HISTORIES, `${name}.json`), 'utf8')) as {
      events: Event[];
    };
    const tasks: Event[][] = [];
    for (const e of events) {
      if (e.eventType === 'EVENT_TYPE_WORKFLOW_TASK_COMPLETED') tasks.push([]);
      else tasks.at(-1)?.push(e);
    }
    const found = tasks.filter((task) => task.some(acceptsEffectful));
    // A scenario where somebody acts or delegates has at least one such task.
    if (/sequential|parallel|signing-groups|delegated/.test(name))
      expect(found.length, name).toBeGreaterThan(0);
    return found;
  };
  const effects = (task: Event[]) =>
    task.flatMap((e) =>
      e.markerRecordedEventAttributes?.markerName === 'core_local_activity'
        ? ['local activity']
        : e.activityTaskScheduledEventAttributes
          ? [e.activityTaskScheduledEventAttributes.activityType.name]
          : [],
    );

  it('v6 (approval-lean-v3): the workflow task that accepts an action or a delegation touches nothing outside the workflow; v5 did', async () => {
    for (const name of V6) {
      const tasks = await accepting(name);
      for (const task of tasks) {
        expect(effects(task), name).toEqual([]);
        // The timer the handler waits on before its write.
        expect(
          task.map((e) => e.eventType),
          name,
        ).toContain('EVENT_TYPE_TIMER_STARTED');
      }
    }
    // The same scenarios under approval-lean-v2 wrote (and asked the next approver) in the accepting task.
    for (const name of ['v5/sequential-approved', 'v5/delegated-approved']) {
      const tasks = await accepting(name);
      expect(
        tasks.some((task) => effects(task).includes('local activity')),
        name,
      ).toBe(true);
    }
  });

  it('v7 (approval-lean-v4): the workflow task that accepts an action or a delegation only schedules its write, as an ordinary activity; no timer', async () => {
    for (const name of V7) {
      const tasks = await accepting(name);
      for (const task of tasks) {
        const accepted = task
          .filter(acceptsEffectful)
          .map((e) =>
            e.workflowExecutionUpdateAcceptedEventAttributes!.acceptedRequest.input.name === 'act'
              ? 'recordApproverAction'
              : 'recordDelegation',
          );
        // One write per update it accepted (a parallel document's approvers may act in the same task), and
        // nothing else: no local activity (no read-model write, no approval request), no timer.
        expect(effects(task).sort(), name).toEqual(accepted.sort());
        expect(
          task.map((e) => e.eventType),
          name,
        ).not.toContain('EVENT_TYPE_TIMER_STARTED');
      }
    }
  });

  it('v8 (approval-lean-v5): the accepting task schedules one activity per action, which also asks whoever it made due or finalizes; no local activity, no timer', async () => {
    const WRITES = [
      'recordApproverAction',
      'recordActionAndNotify',
      'recordActionAndFinalize',
      'recordDelegation',
    ];
    for (const name of V8) {
      for (const task of await accepting(name)) {
        const accepted = task.filter(acceptsEffectful).length;
        expect(effects(task).length, name).toBe(accepted);
        for (const effect of effects(task)) expect(WRITES, name).toContain(effect);
        expect(
          task.map((e) => e.eventType),
          name,
        ).not.toContain('EVENT_TYPE_TIMER_STARTED');
      }
    }
  });

  it('v8 (approval-lean-v5) does less Temporal work than v7 for the same runs', async () => {
    const historyOf = async (name: string) =>
      (JSON.parse(await readFile(path.join(HISTORIES, `${name}.json`), 'utf8')) as { events: Event[] })
        .events;
    const scheduledIn = (events: Event[]) =>
      events.flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType.name ?? []);
    const count = (events: Event[], type: string) =>
      events.filter((e) => e.eventType === `EVENT_TYPE_${type}`).length;
    const localActivities = (events: Event[]) =>
      events.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity').length;
    // A sequential document: each action but the last writes and asks the next approver in one activity; the last
    // writes and finalizes in one. (sendSignedCopies: the recorder's 10 s finalization time-out leaves the copies
    // too little time inside the finalization, so they go on their own.)
    expect(scheduledIn(await historyOf('v8/sequential-approved'))).toEqual([
      'recordActionAndNotify',
      'recordActionAndNotify',
      'recordActionAndNotify',
      'recordActionAndFinalize',
      'sendSignedCopies',
    ]);
    for (const name of V8.filter((n) => n.endsWith('-approved') && !n.includes('finalization'))) {
      const scheduled = scheduledIn(await historyOf(name));
      expect(scheduled, name).toContain('recordActionAndFinalize');
      expect(scheduled, name).not.toContain('finalizeAndSendSignedCopies');
    }
    // A finalization that fails: the combined activity fails with it, the action is written on its own (a no-op
    // by then) and the finalization runs as before — one activity more than v7 on this path, not a lost step.
    for (const name of ['v8/finalization-failed-voided', 'v8/finalization-retried-approved']) {
      expect(scheduledIn(await historyOf(name)).slice(0, 3), name).toEqual([
        'recordActionAndFinalize',
        'recordApproverAction',
        'finalizeAndSendSignedCopies',
      ]);
    }
    for (const name of V8.filter((n) => !n.includes('finalization'))) {
      const [v7, v8] = await Promise.all([historyOf(name.replace(/^v8/, 'v7')), historyOf(name)]);
      expect(v8.length, name).toBeLessThan(v7.length);
      expect(count(v8, 'WORKFLOW_TASK_STARTED'), name).toBeLessThanOrEqual(
        count(v7, 'WORKFLOW_TASK_STARTED'),
      );
      expect(count(v8, 'ACTIVITY_TASK_SCHEDULED'), name).toBeLessThanOrEqual(
        count(v7, 'ACTIVITY_TASK_SCHEDULED'),
      );
      // The send, the policies and the first requests: one local activity at the start, not one each.
      expect(localActivities(v8), name).toBeLessThan(localActivities(v7));
    }
  });

  it('v9 (approval-delegate-request-v1): the task that completes the delegate update schedules the delegate’s request as an ordinary activity, so nothing holds the answer back', async () => {
    /** The commands of the workflow task that completed the `delegate` update: its events up to the next task's. */
    const completingTask = async (name: string) => {
      const { events } = JSON.parse(await readFile(path.join(HISTORIES, `${name}.json`), 'utf8')) as {
        events: (Event & { eventType: string })[];
      };
      const accepted = events.findIndex(
        (e) => e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest.input.name === 'delegate',
      );
      expect(accepted, name).toBeGreaterThan(0);
      const completed = events.findIndex(
        (e, i) => i > accepted && e.eventType === 'EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED',
      );
      const next = events.findIndex(
        (e, i) => i > completed && /ACTIVITY_TASK_STARTED|WORKFLOW_TASK_SCHEDULED/.test(e.eventType),
      );
      return events.slice(completed, next);
    };
    const localIn = (task: Event[]) =>
      task.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity').length;
    const v9 = await completingTask('v9/delegated-approved');
    expect(v9.flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType.name ?? [])).toEqual([
      'notifyApprover',
    ]);
    expect(localIn(v9)).toBe(0);
    // The v8 run of the same scenario asked the delegate with a local activity, which that task waited for.
    const v8 = await completingTask('v8/delegated-approved');
    expect(localIn(v8)).toBe(1);
  });

  it('the current workflow code replays every one of them', async () => {
    const results = await replayAll(workflowsPath());
    expect(results.map((r) => r.workflowId)).toEqual(EXPECTED);
    for (const r of results) expect(r.error, `${r.workflowId}: ${String(r.error)}`).toBeUndefined();
  }, 120_000);

  it('a workflow with an incompatible change fails the replay', async () => {
    const results = await replayAll(path.resolve(import.meta.dirname, 'changed-workflow/index.ts'));
    expect(results).toHaveLength(EXPECTED.length);
    for (const r of results) {
      expect(r.error, r.workflowId).toBeDefined();
      expect((r.error as Error).name).toMatch(/DeterminismViolationError/);
    }
  }, 120_000);
});

describe('documentApproval follows actions the API recorded', () => {
  type HistoryEvent = {
    eventType: string;
    activityTaskScheduledEventAttributes?: { activityType: { name: string } };
    markerRecordedEventAttributes?: { markerName: string; details?: Record<string, unknown> };
  };
  const historyOf = async (name: string) =>
    (JSON.parse(await readFile(path.join(HISTORIES, `${name}.json`), 'utf8')) as { events: HistoryEvent[] })
      .events;
  const count = (events: HistoryEvent[], type: string) =>
    events.filter((e) => e.eventType === `EVENT_TYPE_${type}`).length;

  it('no activity writes an action, and the same runs take fewer workflow and activity tasks than v8', async () => {
    for (const name of DOCUMENT_APPROVAL) {
      const events = await historyOf(name);
      const scheduled = events.flatMap(
        (e) => e.activityTaskScheduledEventAttributes?.activityType.name ?? [],
      );
      for (const writer of ['recordApproverAction', 'recordActionAndNotify', 'recordActionAndFinalize'])
        expect(scheduled, name).not.toContain(writer);
      if (!/approved|rejected/.test(name)) continue;
      const v8 = await historyOf(name.replace(/^document-approval/, 'v8'));
      expect(count(events, 'ACTIVITY_TASK_SCHEDULED'), name).toBeLessThan(
        count(v8, 'ACTIVITY_TASK_SCHEDULED'),
      );
      expect(count(events, 'WORKFLOW_TASK_STARTED'), name).toBeLessThanOrEqual(
        count(v8, 'WORKFLOW_TASK_STARTED'),
      );
    }
  });
});
