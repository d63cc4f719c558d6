import { describe, expect, it } from 'vitest';
import { checkWorkerHealth } from '../../src/runtime/worker-health.ts';

/**
 * The health verdict itself: a Temporal that does not answer in time counts as down (a connection reconnecting to a
 * server that is gone can hold a call far past its deadline), and a worker that is not running or not polling is
 * unhealthy whatever Temporal says.
 */

const running = {
  runState: 'RUNNING',
  workflowPollerState: 'POLLING',
  activityPollerState: 'POLLING',
} as const;

describe('checkWorkerHealth', () => {
  it('is healthy while the worker runs and polls and Temporal answers', async () => {
    expect(await checkWorkerHealth({ status: () => running, pingTemporal: () => Promise.resolve() })).toEqual(
      {
        healthy: true,
        worker: 'RUNNING',
        workflowPoller: 'POLLING',
        activityPoller: 'POLLING',
        temporal: 'up',
      },
    );
  });

  it('counts a Temporal that does not answer within the time-out as down, and answers by then', async () => {
    const started = performance.now();
    const health = await checkWorkerHealth({
      status: () => running,
      pingTemporal: () => new Promise<void>(() => undefined),
      pingTimeoutMs: 50,
    });
    expect(health).toMatchObject({ healthy: false, temporal: 'down', worker: 'RUNNING' });
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it('counts a refused ping as down', async () => {
    const health = await checkWorkerHealth({
      status: () => running,
      pingTemporal: () => Promise.reject(new Error('14 UNAVAILABLE')),
    });
    expect(health).toMatchObject({ healthy: false, temporal: 'down' });
  });

  it('is unhealthy while the worker drains or a poller has failed, even with Temporal up', async () => {
    const draining = await checkWorkerHealth({
      status: () => ({ ...running, runState: 'DRAINING' }),
      pingTemporal: () => Promise.resolve(),
    });
    expect(draining).toMatchObject({ healthy: false, worker: 'DRAINING', temporal: 'up' });
    const failedPoller = await checkWorkerHealth({
      status: () => ({ ...running, activityPollerState: 'FAILED' }),
      pingTemporal: () => Promise.resolve(),
    });
    expect(failedPoller).toMatchObject({ healthy: false, activityPoller: 'FAILED' });
  });
});
