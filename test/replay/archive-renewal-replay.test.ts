import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ensureTestTemporalRuntime } from '../helpers/temporal-runtime.ts';
import { workflowsPath } from '../../src/temporal/worker.ts';
import { recordedHistories, replayRecorded } from '../helpers/histories.ts';

ensureTestTemporalRuntime();

/**
 * The archive renewal schedule's workflow, replayed from the run recorded by test/final-pdf/archive-renewal.test.ts
 * (RECORD_HISTORIES=archive-renewal): today's code must make the same commands. Never re-recorded; a changed
 * workflow adds a history under a new name.
 */
const HISTORIES = path.resolve(import.meta.dirname, '../histories/archive-renewal');

describe('replaying recorded archive renewal histories', () => {
  it('replays through the current workflow code', { timeout: 120_000 }, async () => {
    const names = await recordedHistories(HISTORIES);
    expect(names).toEqual(['renewed']);
    const results = await replayRecorded(HISTORIES, names, workflowsPath());
    expect(results.map((r) => [r.workflowId, r.error])).toEqual([['renewed', undefined]]);
  });
});
