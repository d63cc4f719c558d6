import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  BENCH_TEMPORAL_SHAPES,
  parseTemporalShape,
  startBenchTemporal,
  type BenchTemporalShape,
} from '../../bench/temporal-shape.ts';
import { createLogger } from '../../src/logger.ts';
import { createTemporalClient } from '../../src/temporal/client.ts';

/**
 * bench:lifecycle's `development` shape is the dev server as `npm start` runs it, its state in a SQLite file, so a
 * workflow outlives a restart of the server; `development-in-memory` keeps nothing. What the benchmark divides by
 * (the round trip) depends on which one runs, so the difference is checked where a user would meet it.
 */
describe("bench:lifecycle's Temporal shapes", () => {
  const logger = createLogger({ logLevel: 'warn' });
  const dirs: string[] = [];
  afterAll(async () => {
    await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
  });

  it('takes the three shapes by name and refuses any other, naming them', () => {
    for (const shape of BENCH_TEMPORAL_SHAPES) expect(parseTemporalShape(shape)).toBe(shape);
    expect(() => parseTemporalShape('dev')).toThrow(
      '--temporal takes development, development-in-memory, production, not dev',
    );
    for (const hostile of ['', '__proto__', 'constructor', 'Development', 'production ']) {
      expect(() => parseTemporalShape(hostile)).toThrow(`not ${hostile}`);
    }
  });

  /** Starts a workflow (no worker: it waits for its first task), restarts the server in the same folder, looks for it. */
  const survivesRestart = async (shape: BenchTemporalShape) => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'wathiq-shape-'));
    dirs.push(dir);
    const workflowId = `shape-${shape}-${Date.now()}`;
    const first = await startBenchTemporal(shape, dir, logger);
    const before = createTemporalClient({ address: first.address, namespace: 'default' });
    try {
      await before.client.workflow.start('anyWorkflow', { taskQueue: 'nobody-polls', workflowId });
    } finally {
      await before.close();
      await first.stop();
    }
    const second = await startBenchTemporal(shape, dir, logger);
    const after = createTemporalClient({ address: second.address, namespace: 'default' });
    try {
      const found = await after.client.workflow
        .getHandle(workflowId)
        .describe()
        .then(
          (d) => d.status.name,
          (err: unknown) => `not found: ${(err as Error).name}`,
        );
      return { found, label: first.label, file: existsSync(path.join(dir, 'temporal', 'temporal.db')) };
    } finally {
      await after.close();
      await second.stop();
    }
  };

  const shapes = [
    {
      shape: 'development' as const,
      what: 'keeps its state in a SQLite file, as npm start does: a workflow outlives a restart',
      file: true,
      found: 'RUNNING',
      label: 'Temporal dev server (SQLite file, as npm start runs it)',
    },
    {
      shape: 'development-in-memory' as const,
      what: 'writes nothing: the workflow is gone after a restart',
      file: false,
      found: 'not found: WorkflowNotFoundError',
      label: 'Temporal dev server (SQLite in memory)',
    },
  ];
  for (const { shape, what, ...expected } of shapes) {
    it(`${shape} ${what}`, async () => {
      expect(await survivesRestart(shape)).toEqual(expected);
    }, 120_000);
  }
});
