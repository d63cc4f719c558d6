import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.ts';
import { installTemporalRuntime } from '../../src/temporal/runtime.ts';
import { workflowsPath } from '../../src/temporal/worker.ts';

// The expected nondeterminism below would otherwise be logged as warnings.
installTemporalRuntime(createLogger({ logLevel: 'silent' }));

const HISTORIES = path.resolve(import.meta.dirname, '../histories');
const EXPECTED = ['expired', 'parallel-approved', 'rejected', 'sequential-approved', 'voided'];

async function* histories() {
  for (const file of (await readdir(HISTORIES)).filter((f) => f.endsWith('.json')).sort()) {
    const json: unknown = JSON.parse(await readFile(path.join(HISTORIES, file), 'utf8'));
    // The worker reads the JSON export (`temporal workflow show --output json`) itself.
    yield { workflowId: file.replace(/\.json$/, ''), history: json };
  }
}

async function replayAll(workflowsPathOrBundle: { workflowsPath: string }) {
  const bundle = await bundleWorkflowCode({ ...workflowsPathOrBundle, logger: silent });
  const results: { workflowId: string; error?: unknown }[] = [];
  for await (const result of Worker.runReplayHistories({ workflowBundle: bundle }, histories()))
    results.push(result);
  return results;
}

const silent = { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} };

describe('replaying recorded approval histories', () => {
  it('the committed histories cover the main paths', async () => {
    const files = (await readdir(HISTORIES))
      .filter((f) => f.endsWith('.json'))
      .map((f) => f.replace(/\.json$/, ''));
    expect(files.sort()).toEqual(EXPECTED);
  });

  it('the current workflow code replays every one of them', async () => {
    const results = await replayAll({ workflowsPath: workflowsPath() });
    expect(results.map((r) => r.workflowId)).toEqual(EXPECTED);
    for (const r of results) expect(r.error, `${r.workflowId}: ${String(r.error)}`).toBeUndefined();
  }, 120_000);

  it('a workflow with an incompatible change fails the replay', async () => {
    const results = await replayAll({
      workflowsPath: path.resolve(import.meta.dirname, 'changed-workflow/index.ts'),
    });
    expect(results).toHaveLength(EXPECTED.length);
    for (const r of results) {
      expect(r.error, r.workflowId).toBeDefined();
      expect((r.error as Error).name).toMatch(/DeterminismViolationError/);
    }
  }, 120_000);
});
