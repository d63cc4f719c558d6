import { readFile, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { NativeConnection, Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { checkWorkerHealth, startWorkerHealthServer } from '../../src/runtime/worker-health.ts';
import { ensureTestTemporalRuntime } from '../helpers/temporal-runtime.ts';
import { eventually } from '../helpers/approval-flow.ts';
import {
  startRole,
  startTemporalServer,
  type RunningProcess,
  type TemporalServer,
} from '../helpers/processes.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.ts';
import { freePort } from '../setup/free-port.ts';

/**
 * The worker's health endpoint (WORKER_HEALTH_PORT), the one compose's health check asks: 200 while the worker runs,
 * polls and reaches Temporal; 503 once Temporal is gone (the worker process itself keeps running and retrying) and
 * 200 again when it is back; 503 once the worker has stopped.
 */

interface HealthBody {
  status: string;
  worker: string;
  workflowPoller: string;
  activityPoller: string;
  temporal: string;
}

async function health(url: string): Promise<{ status: number; body: HealthBody }> {
  const res = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  return { status: res.status, body: (await res.json()) as HealthBody };
}

describe('the worker process with WORKER_HEALTH_PORT', () => {
  let dir: string;
  let temporal: TemporalServer;
  let database: TestDatabase;
  let worker: RunningProcess;
  let url: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'wathiq-worker-health-'));
    [temporal, database] = await Promise.all([
      freePort().then((port) =>
        startTemporalServer({
          cliPath: inject('temporalCliPath'),
          port,
          dbFile: path.join(dir, 'temporal.db'),
        }),
      ),
      createTestDatabase(),
    ]);
    const port = await freePort();
    url = `http://127.0.0.1:${port}/health`;
    worker = await startRole('worker', {
      NODE_ENV: 'test',
      DATA_DIR: path.join(dir, 'data'),
      DATABASE_URL: database.url,
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_TASK_QUEUE: 'worker-health',
      WORKER_HEALTH_PORT: String(port),
    });
  });

  afterAll(async () => {
    await worker?.kill('SIGTERM');
    await temporal?.stop();
    await database?.drop();
    await rm(dir, { recursive: true, force: true });
  });

  it('prints the endpoint in its banner and answers 200 while it polls a reachable Temporal', async () => {
    expect(worker.output()).toContain(`health: ${url}`);
    expect(await health(url)).toEqual({
      status: 200,
      body: {
        status: 'ok',
        worker: 'RUNNING',
        workflowPoller: 'POLLING',
        activityPoller: 'POLLING',
        temporal: 'up',
      },
    });
    const head = await fetch(url, { method: 'HEAD' });
    expect([head.status, await head.text()]).toEqual([200, '']);
    expect((await fetch(url.replace('/health', '/metrics'))).status).toBe(404);
    const post = await fetch(url, { method: 'POST' });
    expect([post.status, post.headers.get('allow')]).toEqual([405, 'GET, HEAD']);
  });

  it('answers 503 once Temporal is gone, and 200 again when it is back, without a restart', async () => {
    await temporal.process.kill('SIGKILL');
    const down = await health(url);
    expect(down).toEqual({
      status: 503,
      body: expect.objectContaining({
        status: 'unavailable',
        worker: 'RUNNING',
        temporal: 'down',
      }) as HealthBody,
    });
    await temporal.restart();
    await eventually(async () => (await health(url)).status === 200, 60_000);
    expect(worker.child.exitCode).toBeNull();
  }, 120_000);
});

describe('the health of a worker that has stopped', () => {
  it('answers 503 with the worker STOPPED while the endpoint still serves', async () => {
    ensureTestTemporalRuntime();
    const connection = await NativeConnection.connect({ address: inject('temporalAddress') });
    const worker = await Worker.create({
      connection,
      taskQueue: `worker-health-stop-${Date.now()}`,
      workflowBundle: { code: await readFile(inject('workflowBundlePath'), 'utf8') },
      activities: { noop: () => Promise.resolve() },
    });
    const running = worker.run();
    const server = await startWorkerHealthServer({
      host: '127.0.0.1',
      port: 0,
      check: () =>
        checkWorkerHealth({
          status: () => worker.getStatus(),
          pingTemporal: async () => {
            await connection.healthService.check({});
          },
        }),
    });
    try {
      await eventually(async () => (await health(server.url)).status === 200, 30_000);
      worker.shutdown();
      await running;
      expect(await health(server.url)).toEqual({
        status: 503,
        body: expect.objectContaining({
          status: 'unavailable',
          worker: 'STOPPED',
          temporal: 'up',
        }) as HealthBody,
      });
    } finally {
      await server.stop();
      await connection.close();
    }
  }, 60_000);
});
