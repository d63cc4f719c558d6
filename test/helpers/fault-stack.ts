import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { inject } from 'vitest';
import { createDb, type Knex } from '../../src/db/knex.ts';
import { migrateLatest } from '../../src/db/migrate.ts';
import { createLogger } from '../../src/logger.ts';
import { startEmbeddedPostgres, type EmbeddedPostgresHandle } from '../../src/runtime/embedded-postgres.ts';
import { startFakeGraphApi, type FakeGraphApi } from '../fakes/fake-graph-api.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver.ts';
import { freePort } from '../setup/free-port.ts';
import { createDriver, type LifecycleDriver } from './lifecycle-driver.ts';
import { createTestPki, type TestPki } from './pki.ts';
import { outputTail, startRole, startTemporalServer, wathiqEnv, type RunningProcess } from './processes.ts';
import { startProductionTemporal } from './production-temporal.ts';
import { createTestDatabase } from './test-database.ts';

/**
 * The one harness of the fault tests: it starts PostgreSQL (a database copied from the test template, or a server of
 * the test's own it can stop and start), Temporal in the shape asked for, the fakes at the border (Graph API, webhook
 * receiver, a test PKI), then the API and worker processes, and a lifecycle driver with its webhook registered.
 *
 * Two Temporal shapes: `development`, the CLI's dev server (one process, SQLite, one history shard) that `npm start`
 * runs; and `production`, Temporal's server built from Go modules with PostgreSQL persistence and 4 history shards
 * (test/helpers/production-temporal.ts). Each fault test runs on both (TEMPORAL_SHAPES).
 */

export type TemporalShape = 'development' | 'production';

/** Both shapes; FAULT_TEMPORAL_SHAPES=development (or production) runs one, e.g. while working on a test. */
export const TEMPORAL_SHAPES: TemporalShape[] = (() => {
  const all: TemporalShape[] = ['development', 'production'];
  const asked = process.env.FAULT_TEMPORAL_SHAPES?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (!asked?.length) return all;
  const unknown = asked.filter((s) => !all.includes(s as TemporalShape));
  if (unknown.length) throw new Error(`FAULT_TEMPORAL_SHAPES: unknown shape ${unknown.join(', ')}`);
  return asked as TemporalShape[];
})();

/** A Temporal server of the test's own, which it may kill and start again on the same port and state. */
export interface OwnTemporal {
  address: string;
  process: RunningProcess;
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** PostgreSQL of the test's own: its data folder and port stay, so it can be stopped and started again. */
export interface OwnPostgres {
  dataDir: string;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export interface FaultStackOptions {
  /** Names the scratch folder and the task queue. */
  name: string;
  shape: TemporalShape;
  /**
   * A Temporal server of the test's own, to kill and restart. The development shape shares the run's dev server
   * otherwise; the production shape always starts one of its own.
   */
  ownTemporal?: boolean;
  /** A PostgreSQL server of the test's own (to stop and start) instead of a database from the shared template. */
  ownPostgres?: boolean;
}

export interface RolesOptions {
  apis: number;
  workers: number;
  /** On top of every role's environment. */
  env?: Record<string, string>;
  /** Where the finalization asks for a time-stamp (a test that wants to hold it). */
  tsaUrl?: string;
}

export interface FaultStack {
  shape: TemporalShape;
  dir: string;
  db: Knex;
  temporalAddress: string;
  /** Set with `ownTemporal` (and always in the production shape). */
  temporal: OwnTemporal | undefined;
  /** Set with `ownPostgres`. */
  postgres: OwnPostgres | undefined;
  graph: FakeGraphApi;
  receiver: WebhookReceiver;
  pki: TestPki;
  /** Base URLs of the API processes (`http://127.0.0.1:<port>`), once `startRoles` ran. */
  apiBases: string[];
  apis: RunningProcess[];
  workers: RunningProcess[];
  /** Each worker's health endpoint (WORKER_HEALTH_PORT), in the order of `workers`. */
  workerHealthUrls: string[];
  /** Set by `startRoles`. */
  driver: LifecycleDriver;
  /** Starts the API and worker processes (in parallel), then the driver, and registers its webhook. */
  startRoles(options: RolesOptions): Promise<void>;
  /** Starts one more worker with the environment the others have (after one was killed, say). */
  startWorker(name: string): Promise<RunningProcess>;
  /** Stops everything this stack started; safe after a failed start. */
  stop(): Promise<void>;
}

const logger = createLogger({ logLevel: 'silent' });

/** How long a role may take to end after SIGTERM before the harness kills it (its own deadline is shorter). */
const ROLE_STOP_MS = 60_000;

/**
 * SIGTERM, and the process's end awaited; one still running after ROLE_STOP_MS is killed, and what it printed is
 * logged, so a shutdown that hangs names itself in the run's output instead of timing out the hook that stops it.
 */
async function stopRole(role: RunningProcess): Promise<void> {
  // A role the test itself killed has nothing to say here.
  if (role.child.exitCode !== null || role.child.signalCode !== null) return;
  const started = Date.now();
  const ended = await Promise.race([
    role.kill('SIGTERM'),
    new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), ROLE_STOP_MS).unref()),
  ]);
  if (ended === undefined) {
    await role.kill('SIGKILL');
    console.warn(
      `${role.name}: still running ${ROLE_STOP_MS} ms after SIGTERM; killed:\n${outputTail(role.output())}`,
    );
  } else if (ended !== 0) {
    console.warn(
      `${role.name}: ended with ${ended} ${Date.now() - started} ms after SIGTERM:\n${outputTail(role.output())}`,
    );
  }
}

async function ownPostgres(dir: string): Promise<{ own: OwnPostgres; url: string }> {
  const dataDir = path.join(dir, 'pg', 'data');
  const port = await freePort();
  const start = () => startEmbeddedPostgres({ dir: dataDir, port, logger, database: 'wathiq' });
  let handle: EmbeddedPostgresHandle | undefined = await start();
  const url = handle.url('wathiq');
  const migrating = createDb(url, { poolMax: 1 });
  await migrateLatest(migrating).finally(() => migrating.destroy());
  return {
    url,
    own: {
      dataDir,
      async start() {
        handle = await start();
      },
      async stop() {
        await handle?.stop();
        handle = undefined;
      },
    },
  };
}

async function ownTemporal(shape: TemporalShape, dir: string): Promise<OwnTemporal> {
  const cliPath = inject('temporalCliPath');
  if (shape === 'production') return startProductionTemporal({ dir: path.join(dir, 'temporal'), cliPath });
  const server = await startTemporalServer({
    cliPath,
    port: await freePort(),
    dbFile: path.join(dir, 'temporal.db'),
  });
  return {
    address: server.address,
    get process() {
      return server.process;
    },
    restart: () => server.restart(),
    stop: () => server.stop(),
  };
}

export async function startFaultStack(options: FaultStackOptions): Promise<FaultStack> {
  const dir = await mkdtemp(path.join(os.tmpdir(), `wathiq-${options.name}-`));
  await chmod(dir, 0o755); // as root, PostgreSQL runs as its own user and must reach its folder
  const cleanups: (() => Promise<unknown>)[] = [() => rm(dir, { recursive: true, force: true })];
  const later = <T>(value: T, cleanup: (v: T) => Promise<unknown>): T => {
    cleanups.push(() => cleanup(value));
    return value;
  };
  const stopAll = async () => {
    for (const step of cleanups.splice(0).reverse()) {
      const started = Date.now();
      await step().catch(() => undefined);
      const ms = Date.now() - started;
      if (ms > 15_000) console.warn(`${options.name}: a clean-up step took ${ms} ms: ${step.toString()}`);
    }
  };

  try {
    const [database, temporal, graph, receiver, pki] = await Promise.all([
      options.ownPostgres
        ? ownPostgres(dir).then((pg) => later(pg, (p) => p.own.stop()))
        : createTestDatabase().then((d) => later(d, (x) => x.drop())),
      options.ownTemporal || options.shape === 'production'
        ? ownTemporal(options.shape, dir).then((t) => later(t, (x) => x.stop()))
        : undefined,
      startFakeGraphApi().then((g) => later(g, (x) => x.close())),
      startWebhookReceiver().then((r) => later(r, (x) => x.close())),
      createTestPki(path.join(dir, 'pki')),
    ]);
    const db =
      'db' in database ? database.db : later(createDb(database.url, { poolMax: 2 }), (d) => d.destroy());
    const temporalAddress = temporal?.address ?? inject('temporalAddress');
    const appSecret = `app-secret-${randomBytes(8).toString('hex')}`;
    const taskQueue = `faults-${options.name}-${randomBytes(4).toString('hex')}`;
    let roleEnv: Record<string, string> = {};
    const roles: RunningProcess[] = [];
    cleanups.push(() => Promise.all(roles.map((r) => stopRole(r))));

    const stack: FaultStack = {
      shape: options.shape,
      dir,
      db,
      temporalAddress,
      temporal,
      postgres: 'own' in database ? database.own : undefined,
      graph,
      receiver,
      pki,
      apiBases: [],
      apis: [],
      workers: [],
      workerHealthUrls: [],
      driver: undefined as unknown as LifecycleDriver,
      async startRoles(o) {
        const ports = await Promise.all(Array.from({ length: o.apis }, () => freePort()));
        stack.apiBases = ports.map((p) => `http://127.0.0.1:${p}`);
        roleEnv = {
          ...wathiqEnv({
            databaseUrl: database.url,
            temporalAddress,
            taskQueue,
            dataDir: path.join(dir, 'data'),
            whatsapp: { ...graph, appSecret },
            signing: pki,
            ...(o.tsaUrl && { tsaUrl: o.tsaUrl }),
          }),
          // Links in messages point to the first API, whichever API sent them.
          PUBLIC_BASE_URL: stack.apiBases[0] ?? 'http://127.0.0.1',
          ...o.env,
        };
        const names = (role: string, n: number) =>
          Array.from({ length: n }, (_, i) => (n > 1 ? `${role} ${i + 1}` : role));
        const [apis] = await Promise.all([
          Promise.all(
            names('api', o.apis).map((name, i) =>
              startRole('api', { ...roleEnv, PORT: String(ports[i]) }, { name }).then((api) => {
                roles.push(api);
                return api;
              }),
            ),
          ),
          Promise.all(names('worker', o.workers).map((name) => stack.startWorker(name))),
        ]);
        stack.apis = apis;
        stack.driver = await createDriver({ apis: stack.apiBases, db, graph, appSecret });
        cleanups.push(() => stack.driver.stop({ abandon: true }));
        await stack.driver.registerWebhook(receiver);
      },
      async startWorker(name) {
        const port = await freePort();
        const worker = await startRole('worker', { ...roleEnv, WORKER_HEALTH_PORT: String(port) }, { name });
        roles.push(worker);
        stack.workers.push(worker);
        stack.workerHealthUrls.push(`http://127.0.0.1:${port}/health`);
        return worker;
      },
      stop: stopAll,
    };
    return stack;
  } catch (err) {
    await stopAll();
    throw err;
  }
}
