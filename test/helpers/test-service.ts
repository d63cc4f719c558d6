import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import { bundleWorkflowCode, NativeConnection, type Worker } from '@temporalio/worker';
import { inject } from 'vitest';
import { createActivities } from '../../src/activities/index.ts';
import type { ApiDeps } from '../../src/http/deps.ts';
import { issueApiKey } from '../../src/features/accounts/api-keys.ts';
import type { ApiScope } from '../../src/auth/api-key-format.ts';
import { hashPassword } from '../../src/auth/passwords.ts';
import { loadConfig, type Config } from '../../src/config.ts';
import type { Plan } from '../../src/domain/plans.ts';
import { accountsStore } from '../../src/features/accounts/accounts-store.ts';
import { createLogger, type Logger } from '../../src/logger.ts';
import { createPrecompressedAssets } from '../../src/http/precompressed.ts';
import { startApiServer, type RunningApi } from '../../src/runtime/api-server.ts';
import { createRateLimiter } from '../../src/runtime/rate-limiter-factory.ts';
import { secretBoxFromSettings } from '../../src/auth/secret-box.ts';
import { createStorage } from '../../src/storage/create-storage.ts';
import { createWorkerDeps } from '../../src/runtime/worker-deps.ts';
import { createTemporalClient, type TemporalClientHandle } from '../../src/temporal/client.ts';
import { createWorker, workflowsPath } from '../../src/temporal/worker.ts';
import { promoteOnStart, workerDeployments } from '../../src/temporal/worker-deployments.ts';
import { workflowBuildId } from '../../src/temporal/workflow-build-id.ts';
import { startTracingFromConfig } from '../../src/runtime/tracing.ts';
import type { Tracing } from '../../src/tracing/sdk.ts';
import { createTestDatabase, type TestDatabase } from './test-database.ts';
import { ensureTestTemporalRuntime } from './temporal-runtime.ts';

export interface TestAccount {
  accountId: string;
  apiKeyId: string;
  key: string;
  secret: string;
  authorization: string;
}

export interface TestService {
  baseUrl: string;
  config: Config;
  database: TestDatabase;
  temporal: TemporalClientHandle;
  taskQueue: string;
  logger: Logger;
  api: RunningApi;
  /** What the app was built from, for tests that build a second app with one part changed. */
  deps: ApiDeps;
  /** This process's tracing, when started with `traceTo`. */
  tracing?: Tracing;
  createAccount(options?: { plan?: Plan; scopes?: readonly ApiScope[] }): Promise<TestAccount>;
  request(path: string, init?: RequestInit & { account?: TestAccount }): Promise<Response>;
  /** Stops the worker (as a crash or deploy would); Temporal keeps the workflows and their timers. */
  stopWorker(): Promise<void>;
  /** Starts a worker again on the same task queue. */
  startWorker(): Promise<void>;
  close(): Promise<void>;
}

let workflowBundle: { code: string } | undefined;
/** The build id of the global setup's bundle (the same sources; tracing's interceptors do not change it). */
let buildId: Promise<string> | undefined;
/** The bundle with tracing's workflow interceptors, made once per test file that traces. */
let tracedWorkflowBundle: { code: string } | undefined;
const silentBundler = { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} };

// Every test account has the same password: hashed once per test file, not per account (scrypt costs about 0.1 s
// of CPU per hash, and a test file may create a dozen accounts). Each stored hash is still a real scrypt hash.
let passwordHash: Promise<string> | undefined;
const testPasswordHash = () => (passwordHash ??= hashPassword('correct horse battery staple'));

/**
 * The real service for one test file: its own database, its own task queue on the shared Temporal server, a
 * worker, and the Koa app on a real HTTP port.
 */
export async function startTestService(
  options: {
    env?: Record<string, string>;
    worker?: boolean;
    database?: TestDatabase;
    workerOverrides?: Parameters<typeof createWorkerDeps>[3];
    /** The dashboard's clock (sign-in delays, sessions), for tests that play time forward. */
    now?: () => Date;
    /**
     * Traces as main.ts does when OTEL_EXPORTER_OTLP_ENDPOINT is set (env must set it), into this exporter
     * instead of OTLP; the worker then runs a bundle built with the tracing interceptors.
     */
    traceTo?: SpanExporter;
    /** The logger of the API, the worker and the Temporal runtime (when it is the first); silent unless given. */
    logger?: Logger;
  } = {},
): Promise<TestService> {
  const database = options.database ?? (await createTestDatabase());
  const taskQueue = `test-${randomBytes(6).toString('hex')}`;
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    PORT: '0',
    DATABASE_URL: database.url,
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    TEMPORAL_TASK_QUEUE: taskQueue,
    // A deployment of its own, so making its version current changes no other test's workers.
    TEMPORAL_DEPLOYMENT_NAME: `test-${taskQueue}`,
    DATA_DIR: inject('dataDir'),
    // Webhook receivers in tests are real HTTP servers on 127.0.0.1.
    WEBHOOK_ALLOW_PRIVATE: 'true',
    ...options.env,
  });
  const logger =
    options.logger ?? createLogger({ logLevel: process.env.TEST_LOG_LEVEL === 'debug' ? 'debug' : 'silent' });
  ensureTestTemporalRuntime(logger);
  let tracing: Tracing | undefined;
  if (options.traceTo) {
    tracing = await startTracingFromConfig(config, { exporter: options.traceTo });
    if (!tracing) throw new Error('traceTo needs OTEL_EXPORTER_OTLP_ENDPOINT in env');
  }
  const temporal = createTemporalClient({
    address: inject('temporalAddress'),
    namespace: config.temporal.namespace,
    ...(tracing && { interceptors: tracing.clientInterceptors }),
  });
  const bundleForWorker = async (): Promise<{ code: string }> => {
    if (!tracing) return (workflowBundle ??= { code: await readFile(inject('workflowBundlePath'), 'utf8') });
    return (tracedWorkflowBundle ??= await bundleWorkflowCode({
      workflowsPath: workflowsPath(),
      workflowInterceptorModules: tracing.workflowInterceptorModules,
      logger: silentBundler,
    }));
  };

  let worker: Worker | undefined;
  let workerRun: Promise<void> | undefined;
  let workerConnection: NativeConnection | undefined;
  const startWorker = async () => {
    if (worker) return;
    const workflowBundle = await bundleForWorker();
    workerConnection = await NativeConnection.connect({ address: inject('temporalAddress') });
    worker = await createWorker({
      connection: workerConnection,
      namespace: config.temporal.namespace,
      taskQueue,
      activities: createActivities(createWorkerDeps(config, database.db, logger, options.workerOverrides)),
      workflowBundle,
      ...(tracing && { telemetry: tracing.worker }),
      version: {
        deploymentName: config.temporal.deploymentName,
        buildId: await (buildId ??= workflowBuildId(workflowsPath())),
      },
      // A stopped worker leaves its workflows' next tasks on its sticky queue until this passes; a test that
      // restarts the worker should not wait the default 10 s for them to reach the new one.
      extra: { stickyQueueScheduleToStartTimeout: '1s' },
      // As the worker role: a stop never waits for ever on an activity that ignores its cancellation.
      shutdownTimeoutMs: config.shutdownTimeoutMs,
    });
    workerRun = worker.run();
    // As `npm start` does: the version becomes current once it registers (a restart finds it current already).
    await promoteOnStart(
      workerDeployments({
        connection: temporal.connection,
        namespace: config.temporal.namespace,
        deploymentName: config.temporal.deploymentName,
        taskQueue,
        identity: 'test-service',
      }),
      await buildId,
    );
  };
  const stopWorker = async () => {
    if (!worker) return;
    worker.shutdown();
    await workerRun;
    await workerConnection?.close();
    worker = undefined;
    workerRun = undefined;
    workerConnection = undefined;
  };
  if (options.worker !== false) await startWorker();

  const deps: ApiDeps = {
    config,
    db: database.db,
    temporal,
    logger,
    rateLimiter: createRateLimiter(config, database.db),
    storage: createStorage(config),
    secrets: secretBoxFromSettings(config.encryption),
    // The approval page's compressed assets as the global setup made them once (the build's role in production).
    pageAssets: createPrecompressedAssets({
      cacheDir: path.join(config.dataDir, 'asset-cache'),
      readDirs: [inject('pageAssetCache')],
    }),
  };
  const api = await startApiServer({ ...deps, ...(options.now && { now: options.now }) }, '127.0.0.1', 0);

  const service: TestService = {
    baseUrl: `${api.url}/api/v1`,
    config,
    database,
    temporal,
    taskQueue,
    logger,
    api,
    deps,
    ...(tracing && { tracing }),
    async createAccount(opts = {}) {
      const account = await accountsStore(database.db).create({
        name: 'Test Account',
        email: `test-${randomBytes(6).toString('hex')}@example.test`,
        passwordHash: await testPasswordHash(),
        plan: opts.plan ?? 'business',
      });
      const issued = await issueApiKey(database.db, {
        accountId: account.id,
        name: 'test key',
        ...(opts.scopes ? { scopes: opts.scopes } : {}),
      });
      return {
        accountId: account.id,
        apiKeyId: issued.apiKey.id,
        key: issued.apiKey.key,
        secret: issued.secret,
        authorization: `Bearer ${issued.apiKey.key}:${issued.secret}`,
      };
    },
    request(path, init = {}) {
      const { account, headers, ...rest } = init;
      const h = new Headers(headers);
      if (account && !h.has('authorization')) h.set('authorization', account.authorization);
      if (typeof rest.body === 'string' && !h.has('content-type')) h.set('content-type', 'application/json');
      return fetch(`${service.baseUrl}${path}`, { ...rest, headers: h });
    },
    stopWorker,
    startWorker,
    async close() {
      await api.stop();
      await stopWorker();
      await temporal.close();
      await tracing?.shutdown();
      if (!options.database) await database.drop();
    },
  };
  return service;
}
