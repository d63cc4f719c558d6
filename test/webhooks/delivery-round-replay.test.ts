import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.ts';
import { installTemporalRuntime } from '../../src/temporal/runtime.ts';
import { workflowsPath } from '../../src/temporal/worker.ts';

// The expected nondeterminism below would otherwise be logged as warnings.
installTemporalRuntime(createLogger({ logLevel: 'silent' }));

/**
 * Recorded by record-delivery-histories.test.ts (`temporal workflow show --output json`): one workflow per round
 * of one delivery (`webhookDeliveryRoundWorkflow`). The previous design's histories are replayed by
 * delivery-replay.test.ts.
 */
const HISTORIES = path.resolve(import.meta.dirname, '../histories/webhook-rounds');
const EXPECTED = ['failed', 'gone', 'redelivered', 'retried-then-delivered'];
const silent = { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} };

async function* histories() {
  for (const file of (await readdir(HISTORIES)).filter((f) => f.endsWith('.json')).sort()) {
    const json: unknown = JSON.parse(await readFile(path.join(HISTORIES, file), 'utf8'));
    yield { workflowId: file.replace(/\.json$/, ''), history: json };
  }
}

async function replayAll(workflows: string) {
  const bundle = await bundleWorkflowCode({ workflowsPath: workflows, logger: silent });
  const results: { workflowId: string; error?: unknown }[] = [];
  for await (const result of Worker.runReplayHistories({ workflowBundle: bundle }, histories()))
    results.push(result);
  return results;
}

describe('replaying recorded webhook delivery round histories', () => {
  it('the current workflow code replays every one of them', async () => {
    const results = await replayAll(workflowsPath());
    expect(results.map((r) => r.workflowId)).toEqual(EXPECTED);
    for (const r of results) expect(r.error, `${r.workflowId}: ${String(r.error)}`).toBeUndefined();
  }, 120_000);

  it('a workflow with an incompatible change fails the replay', async () => {
    const results = await replayAll(
      path.resolve(import.meta.dirname, 'changed-delivery-round-workflow/index.ts'),
    );
    expect(results).toHaveLength(EXPECTED.length);
    for (const r of results) {
      expect(r.error, r.workflowId).toBeDefined();
      expect((r.error as Error).name).toMatch(/DeterminismViolationError/);
    }
  }, 120_000);
});
