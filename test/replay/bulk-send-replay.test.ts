import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ensureTestTemporalRuntime } from '../helpers/temporal-runtime.ts';
import { workflowsPath } from '../../src/temporal/worker.ts';
import { recordedHistories, replayRecorded } from '../helpers/histories.ts';

// The expected nondeterminism below would otherwise be logged as warnings.
ensureTestTemporalRuntime();

/** Recorded by record-bulk-send-histories.test.ts (`temporal workflow show --output json`, one run each). */
const HISTORIES = path.resolve(import.meta.dirname, '../histories/bulk-send');
const EXPECTED = ['cancelled-while-paused', 'continued-completed', 'continued-first-run', 'paused-resumed'];
const replayAll = async (workflows: string) =>
  replayRecorded(HISTORIES, await recordedHistories(HISTORIES), workflows);

describe('replaying recorded bulk-send workflow histories', () => {
  it('the current workflow code replays every one of them', async () => {
    const names = await recordedHistories(HISTORIES);
    expect(names).toEqual(EXPECTED);
    const results = await replayAll(workflowsPath());
    expect(results).toHaveLength(EXPECTED.length);
    for (const r of results) expect(r.error, `${r.workflowId}: ${String(r.error)}`).toBeUndefined();
  }, 120_000);

  it('a workflow with an incompatible change fails the replay', async () => {
    const results = await replayAll(path.resolve(import.meta.dirname, 'changed-bulk-send-workflow/index.ts'));
    expect(results).toHaveLength(EXPECTED.length);
    for (const r of results) {
      expect(r.error, r.workflowId).toBeDefined();
      expect((r.error as Error).name).toMatch(/DeterminismViolationError/);
    }
  }, 120_000);
});
