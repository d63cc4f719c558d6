import { readFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { Context } from '@temporalio/activity';
import { NativeConnection } from '@temporalio/worker';
import { describe, expect, inject, it } from 'vitest';
import { createWorker, shutdownTimes } from '../../src/temporal/worker.ts';
import { promoteOnStart, workerDeployments } from '../../src/temporal/worker-deployments.ts';

/**
 * SIGTERM's worker step ends even when an activity ignores its cancellation: in-flight activities may finish for
 * half of SHUTDOWN_TIMEOUT_SECONDS, are cancelled then, and at 80 % the worker's run gives up on them and rejects.
 * Without the force time the SDK waits for ever, and so did the process.
 */
describe('a worker shut down with an activity that never ends', () => {
  it('cancels the activity at the grace time and stops waiting at the force time', async () => {
    const shutdownTimeoutMs = 2_000;
    const { graceMs, forceMs } = shutdownTimes(shutdownTimeoutMs);
    const taskQueue = `worker-shutdown-${randomBytes(4).toString('hex')}`;
    let started!: () => void;
    const activityStarted = new Promise<void>((resolve) => (started = resolve));
    let cancelledAfterMs: number | undefined;
    let shutdownAt = 0;
    const connection = await NativeConnection.connect({ address: inject('temporalAddress') });
    const worker = await createWorker({
      connection,
      namespace: 'default',
      taskQueue,
      workflowBundle: { code: await readFile(inject('workflowBundlePath'), 'utf8') },
      activities: {
        // Hears the cancellation and goes on regardless, as a stuck library call would.
        dispatchStrandedWebhookEvents: () => {
          started();
          Context.current().cancelled.catch(() => (cancelledAfterMs = Date.now() - shutdownAt));
          return new Promise<never>(() => undefined);
        },
      },
      shutdownTimeoutMs,
      // Its workflows are pinned to a version, as in the service: a deployment of the test's own.
      version: { deploymentName: taskQueue, buildId: 'shutdown-test' },
    });
    const running = worker.run();
    const clientConnection = await Connection.connect({ address: inject('temporalAddress') });
    try {
      await promoteOnStart(
        workerDeployments({
          connection: clientConnection,
          namespace: 'default',
          deploymentName: taskQueue,
          taskQueue,
          identity: 'worker-shutdown test',
        }),
        'shutdown-test',
      );
      const client = new Client({ connection: clientConnection });
      const handle = await client.workflow.start('webhookOutboxSweepWorkflow', {
        taskQueue,
        workflowId: taskQueue,
        args: [{ strandedAfterMs: 60_000, intervalMs: 60_000 }],
      });
      await activityStarted;
      shutdownAt = Date.now();
      worker.shutdown();
      const outcome = await running.then(
        () => 'resolved',
        (err: Error) => `${err.name}: ${err.message}`,
      );
      const tookMs = Date.now() - shutdownAt;
      // It rejects (the SDK says the native worker is still in use by the abandoned activity): the process's
      // shutdown logs it and goes on.
      expect(outcome).not.toBe('resolved');
      expect(cancelledAfterMs).toBeGreaterThanOrEqual(graceMs - 100);
      expect(cancelledAfterMs).toBeLessThan(forceMs);
      expect(tookMs).toBeGreaterThanOrEqual(forceMs - 100);
      expect(tookMs).toBeLessThan(forceMs + 5_000);
      await handle.terminate('test over');
    } finally {
      await clientConnection.close();
    }
  }, 60_000);
});
