import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import type { TemporalConnectionOptions } from './connection-options.ts';

/**
 * The workflow bundle's entry (src/workflows/index.ts re-exports each feature's workflows), as source under
 * tsx/vitest or compiled under dist/.
 */
export function workflowsPath(): string {
  const ts = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));
  return existsSync(ts) ? ts : fileURLToPath(new URL('../workflows/index.js', import.meta.url));
}

export interface CreateWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  /** Every activity the workflows call, by name (src/activities builds them). */
  activities: object;
  /** A prebuilt bundle (tests build one once for all files); otherwise the worker bundles the source. */
  workflowBundle?: { code: string };
  /**
   * Tracing's interceptors and sink (src/tracing/sdk.ts), when tracing is on. Their workflow interceptor module
   * goes into the bundle the worker makes; a prebuilt bundle must have been made with it.
   */
  telemetry?: Pick<WorkerOptions, 'interceptors' | 'sinks'>;
  /**
   * The Worker Deployment Version the worker polls as (its build id names the workflow code: workflowBuildId).
   * Every workflow it starts is pinned to that version: it finishes on this code, whatever version later becomes
   * current, so a change to the workflows needs no `patched()` branch. Without it the worker is unversioned.
   */
  version?: { deploymentName: string; buildId: string };
  /**
   * The process's SHUTDOWN_TIMEOUT_SECONDS, in ms: after `shutdown()` the worker's share of it (shutdownTimes).
   * Without it the SDK waits for ever for an activity that does not end.
   */
  shutdownTimeoutMs?: number;
  extra?: Partial<WorkerOptions>;
}

export async function createWorker(options: CreateWorkerOptions): Promise<Worker> {
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    activities: options.activities,
    ...(options.workflowBundle
      ? { workflowBundle: options.workflowBundle }
      : { workflowsPath: workflowsPath() }),
    ...options.telemetry,
    ...(options.shutdownTimeoutMs !== undefined && workerShutdownOptions(options.shutdownTimeoutMs)),
    ...(options.version && {
      workerDeploymentOptions: {
        useWorkerVersioning: true,
        version: options.version,
        defaultVersioningBehavior: 'PINNED',
      },
    }),
    ...options.extra,
  });
}

/**
 * Within the process's shutdown time: in-flight activities finish for half of it, are then cancelled, and at 80 %
 * the worker stops waiting for them (its run rejects), leaving the rest for the connection, the pool and the
 * embedded servers.
 */
export function shutdownTimes(timeoutMs: number): { graceMs: number; forceMs: number } {
  return { graceMs: Math.round(timeoutMs * 0.5), forceMs: Math.round(timeoutMs * 0.8) };
}

function workerShutdownOptions(
  timeoutMs: number,
): Pick<WorkerOptions, 'shutdownGraceTime' | 'shutdownForceTime'> {
  const { graceMs, forceMs } = shutdownTimes(timeoutMs);
  return { shutdownGraceTime: graceMs, shutdownForceTime: forceMs };
}

export async function connectWorker(options: TemporalConnectionOptions): Promise<NativeConnection> {
  return NativeConnection.connect({ address: options.address, tls: options.tls, apiKey: options.apiKey });
}
