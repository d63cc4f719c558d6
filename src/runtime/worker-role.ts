import { hostname } from 'node:os';
import type { Connection } from '@temporalio/client';
import type { NativeConnection, Worker } from '@temporalio/worker';
import type { Config } from '../config.ts';
import { signatureLevelWarning } from '../config.ts';
import type { Knex } from '../db/knex.ts';
import type { Logger } from '../logger.ts';
import { createSigner } from '../pdf/sign/signer.ts';
import type { TemporalConnectionOptions } from '../temporal/connection-options.ts';
import { connectWorker, createWorker, workflowsPath } from '../temporal/worker.ts';
import { promoteOnStart, workerDeployments } from '../temporal/worker-deployments.ts';
import { workflowBuildId } from '../temporal/workflow-build-id.ts';
import type { Tracing } from '../tracing/sdk.ts';
import { createActivities } from '../activities/index.ts';
import type { ProcessMetrics } from './metrics.ts';
import { createWorkerDeps, signerOptions } from './worker-deps.ts';
import { checkWorkerHealth, startWorkerHealthServer, type RunningHealthServer } from './worker-health.ts';
import { markStartup } from './startup-timings.ts';

export { installTemporalRuntime } from '../temporal/runtime.ts';
export { workflowsPath } from '../temporal/worker.ts';
export { cachedWorkflowBundle } from '../temporal/workflow-bundle-cache.ts';

/**
 * The worker role of a process (`npm start`, `start:worker`): loaded by src/main.ts only where a worker runs, so
 * an API process never loads the Temporal SDK's native worker runtime or the activities' dependencies.
 */
export async function runWorker(
  config: Config,
  db: Knex,
  connectionOptions: TemporalConnectionOptions,
  logger: Logger,
  stops: (() => Promise<void>)[],
  metrics: ProcessMetrics | undefined,
  tracing: Tracing | undefined,
  workflowBundle: Promise<{ code: string; cached: boolean }>,
  versioning: WorkerVersioning,
): Promise<string> {
  const levelWarning = signatureLevelWarning(config);
  if (levelWarning) logger.warn({ signatureLevel: config.signing.signatureLevel }, levelWarning);
  if (config.env === 'production') {
    // A certificate that cannot sign would fail every approved document for good: refuse to start instead.
    await createSigner(signerOptions(config));
  }
  const [connection, bundle, buildId] = await Promise.all([
    connectWorker(connectionOptions),
    workflowBundle,
    workflowBuildId(workflowsPath()),
  ]);
  logger.debug({ cached: bundle.cached, buildId }, 'workflow bundle ready');
  markStartup('worker connected, bundle ready');
  const worker = await createWorker({
    workflowBundle: { code: bundle.code },
    connection,
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.taskQueue,
    activities: createActivities(
      createWorkerDeps(config, db, logger, metrics?.worker ? { metrics: metrics.worker } : {}),
    ),
    ...(tracing && { telemetry: tracing.worker }),
    version: { deploymentName: config.temporal.deploymentName, buildId },
    shutdownTimeoutMs: config.shutdownTimeoutMs,
  });
  let shuttingDown = false;
  const running = worker.run();
  running.catch((err: unknown) => {
    // During a shutdown, the force time ran out: the shutdown goes on (and exits 1 if it runs out of time too).
    if (shuttingDown)
      return logger.error({ err }, 'worker shutdown cut short: activities still running abandoned');
    logger.fatal({ err }, 'worker stopped unexpectedly');
    process.exit(1);
  });
  // Pushed before the worker's stop, so it runs after it: while the worker drains, the endpoint answers 503.
  const health = config.workerHealth && (await startHealth(config.workerHealth, worker, connection));
  if (health) stops.push(() => health.stop());
  stops.push(async () => {
    shuttingDown = true;
    worker.shutdown();
    await running.catch(() => undefined);
    await connection.close();
  });
  const version = `version ${buildId} of deployment "${config.temporal.deploymentName}"`;
  if (versioning.promote) {
    const outcome = await promoteOnStart(
      workerDeployments({
        connection: versioning.connection,
        namespace: config.temporal.namespace,
        deploymentName: config.temporal.deploymentName,
        taskQueue: config.temporal.taskQueue,
        identity: `wathiq worker ${hostname()}:${process.pid}`,
      }),
      buildId,
    );
    logger.info(
      { buildId, outcome },
      outcome === 'promoted' ? 'worker version made current' : 'worker version kept',
    );
  }
  const tls = connectionOptions.tls ? (connectionOptions.apiKey ? ', TLS and API key' : ', TLS') : '';
  const healthUrl = health ? `; health: ${health.url}` : '';
  return `task queue "${config.temporal.taskQueue}" on ${connectionOptions.address}${tls}, ${version}${healthUrl}`;
}

/** How long the health check waits for Temporal's answer on the worker's connection. */
const TEMPORAL_PING_MS = 2_000;

function startHealth(
  settings: NonNullable<Config['workerHealth']>,
  worker: Worker,
  connection: NativeConnection,
): Promise<RunningHealthServer> {
  return startWorkerHealthServer({
    ...settings,
    check: () =>
      checkWorkerHealth({
        status: () => worker.getStatus(),
        pingTemporal: async () => {
          await connection.withDeadline(Date.now() + TEMPORAL_PING_MS, () =>
            connection.healthService.check({}),
          );
        },
        pingTimeoutMs: TEMPORAL_PING_MS,
      }),
  });
}

/** Where the worker's own version is made current (`promote`), through the process's Temporal client. */
export interface WorkerVersioning {
  connection: Connection;
  /**
   * Make this version current once it registers, if it never was (a new deploy): always for `npm start`, the
   * whole deployment in one process; for a worker process, WORKER_VERSION_PROMOTION=auto.
   */
  promote: boolean;
}
