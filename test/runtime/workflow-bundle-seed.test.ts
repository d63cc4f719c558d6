import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createLogger } from '../../src/logger.ts';
import { workflowsPath } from '../../src/temporal/worker.ts';
import { cachedWorkflowBundle } from '../../src/temporal/workflow-bundle-cache.ts';
import { seedWorkflowBundle } from '../setup/workflow-bundle-seed.ts';

/**
 * The worker processes tests start (test/helpers/processes.ts) get the run's workflow bundle in their DATA_DIR: the
 * copy must be what a worker, looking for its cache as src/main.ts does, takes as valid for the current sources.
 */
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'wathiq-bundle-seed-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const logger = createLogger({ logLevel: 'error' });

describe('seedWorkflowBundle', () => {
  it("gives a worker's DATA_DIR a cache hit holding the run's bundle", async () => {
    expect(inject('workflowBundleCache')).not.toBe('');
    const dataDir = path.join(dir, 'data');
    await seedWorkflowBundle(inject('workflowBundleCache'), dataDir);
    // Only the two files, each renamed into place (no temporary copy left beside them).
    expect((await readdir(path.join(dataDir, 'cache'))).sort()).toEqual([
      'workflow-bundle.js',
      'workflow-bundle.json',
    ]);

    const found = await cachedWorkflowBundle({
      workflowsPath: workflowsPath(),
      dir: path.join(dataDir, 'cache'),
      logger,
    });
    expect(found.cached).toBe(true);
    expect(found.code).toBe(await readFile(inject('workflowBundlePath'), 'utf8'));
  });

  it('leaves DATA_DIR alone when the run has no cached bundle', async () => {
    const dataDir = path.join(dir, 'none');
    await seedWorkflowBundle('', dataDir);
    await expect(readdir(dataDir)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
