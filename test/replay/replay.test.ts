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
 * test/histories/v3 those whose actions carry the id of their evidence row instead of the evidence (issue 13).
 * A recorded history is never re-recorded: each set proves that runs of its code replay through today's code.
 */
const SETS = ['', 'v2', 'v3'];
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
];

const recorded = () => recordedHistories(HISTORIES, SETS);
const replayAll = async (workflows: string) => replayRecorded(HISTORIES, await recorded(), workflows);

describe('replaying recorded approval histories', () => {
  it('the committed histories cover the main paths, of the old code and of the current one', async () => {
    expect(await recorded()).toEqual(EXPECTED);
  });

  it('the v2 set was recorded by the patched code, the old set by the code before the patches', async () => {
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
      expect(patches, name).toEqual(
        name.startsWith('v3/auto-reminders')
          ? [PATCHES.recovery, PATCHES.autoReminders]
          : name.startsWith('v3/signing-groups')
            ? [PATCHES.recovery, PATCHES.signingGroups, PATCHES.signedCopies]
            : name.startsWith('v3/delegated')
              ? // Recorded after signed copies (issue 15 item 5): the approved document took that patch too.
                [PATCHES.recovery, PATCHES.delegation, PATCHES.signedCopies]
              : /^v[23]\//.test(name)
                ? [PATCHES.recovery]
                : [],
      );
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
        if (name.startsWith('v3/')) {
          expect(typeof act.evidenceId, name).toBe('string');
          expect(act, name).not.toHaveProperty('evidence');
        } else expect(typeof (act.evidence as { at?: unknown } | undefined)?.at, name).toBe('string');
      }
    }
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
