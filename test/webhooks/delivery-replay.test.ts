import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ensureTestTemporalRuntime } from '../helpers/temporal-runtime.ts';
import { workflowsPath } from '../../src/temporal/worker.ts';
import { recordedHistories, replayRecorded } from '../helpers/histories.ts';

// The expected nondeterminism below would otherwise be logged as warnings.
ensureTestTemporalRuntime();

/** Recorded by record-delivery-histories.test.ts (`temporal workflow show --output json`). */
const HISTORIES = path.resolve(import.meta.dirname, '../histories/webhooks');
const EXPECTED = ['gone', 'redelivered', 'retried-then-delivered'];
const replayAll = async (workflows: string) =>
  replayRecorded(HISTORIES, await recordedHistories(HISTORIES), workflows);

describe('replaying recorded webhook delivery histories', () => {
  it('the current workflow code replays every one of them', async () => {
    const results = await replayAll(workflowsPath());
    expect(results.map((r) => r.workflowId)).toEqual(EXPECTED);
    for (const r of results) expect(r.error, `${r.workflowId}: ${String(r.error)}`).toBeUndefined();
  }, 120_000);

  it('a workflow with an incompatible change fails the replay', async () => {
    const results = await replayAll(path.resolve(import.meta.dirname, 'changed-delivery-workflow/index.ts'));
    expect(results).toHaveLength(EXPECTED.length);
    for (const r of results) {
      expect(r.error, r.workflowId).toBeDefined();
      expect((r.error as Error).name).toMatch(/DeterminismViolationError/);
    }
  }, 120_000);
});
