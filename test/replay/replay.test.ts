import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.ts';
import { installTemporalRuntime } from '../../src/temporal/runtime.ts';
import { workflowsPath } from '../../src/temporal/worker.ts';
import { PATCHES } from '../../src/approval/workflow/approval-workflow.ts';
import { recordedHistories, replayRecorded } from '../helpers/histories.ts';

// The expected nondeterminism below would otherwise be logged as warnings.
installTemporalRuntime(createLogger({ logLevel: 'silent' }));

const HISTORIES = path.resolve(import.meta.dirname, '../histories');
/**
 * One directory per version of the workflow code that recorded them: test/histories itself holds the runs of the
 * code before issue 12 (v1), test/histories/v2 those of the code with the issue 12 patches (record-histories.test.ts),
 * test/histories/v3 those whose actions carry the id of their evidence row instead of the evidence (issue 13),
 * test/histories/v4 those of the leaner workflow of issue 16 (patch `approval-lean-v1`: local activities for the
 * read-model writes, finalization and signed copies in one activity).
 * A recorded history is never re-recorded: each set proves that runs of its code replay through today's code.
 */
const SETS = ['', 'v2', 'v3', 'v4'];
/** The v4 set (test/replay/record-histories.test.ts, VERSION v4). */
const V4 = [
  'v4/attention-retried-expired',
  'v4/expired',
  'v4/finalization-retried-approved',
  'v4/parallel-approved',
  'v4/rejected',
  'v4/voided',
];
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
    const v4 = name.startsWith('v4/');
    // Recorded after signed copies (issue 15 item 5): their approved documents took that patch too.
    const grouped = name.startsWith('v3/signing-groups');
    const delegated = name.startsWith('v3/delegated');
    return [
      PATCHES.recovery,
      ...(name.includes('auto-reminders') ? [PATCHES.autoReminders] : []),
      ...(grouped ? [PATCHES.signingGroups] : []),
      ...(delegated ? [PATCHES.delegation] : []),
      ...(v4 ? [PATCHES.lean] : []),
      ...((v4 || grouped || delegated) && name.endsWith('-approved') ? [PATCHES.signedCopies] : []),
    ];
  };

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

  it('actions carry their evidence inline up to v2, and only the id of its stored row from v3 on', async () => {
    for (const name of await recorded()) {
      const { events } = JSON.parse(await readFile(path.join(HISTORIES, `${name}.json`), 'utf8')) as {
        events: {
          workflowExecutionUpdateAcceptedEventAttributes?: {
            acceptedRequest: { input: { name: string; args?: { payloads?: { data: string }[] } } };
          };
        }[];
      };
      const acts = events
        .map((e) => e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest.input)
        .filter((input) => input?.name === 'act')
        .map(
          (input) =>
            JSON.parse(Buffer.from(input!.args!.payloads![0]!.data, 'base64').toString('utf8')) as Record<
              string,
              unknown
            >,
        );
      if (!/approved|rejected/.test(name)) continue;
      expect(acts.length, name).toBeGreaterThan(0);
      for (const act of acts) {
        if (/^v[34]\//.test(name)) {
          expect(typeof act.evidenceId, name).toBe('string');
          expect(act, name).not.toHaveProperty('evidence');
        } else expect(typeof (act.evidence as { at?: unknown } | undefined)?.at, name).toBe('string');
      }
    }
  });

  it('v4 (issue 16) makes its read-model writes local activities and finalizes with the signed copies in one activity', async () => {
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
