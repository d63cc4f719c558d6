import path from 'node:path';
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import { markStartup } from './startup-timings.ts';

export interface Infrastructure {
  databaseUrl: string;
  temporalAddress: string;
  /** What was started here, for the banner: name → where it listens. */
  started: Record<string, string>;
  stop(): Promise<void>;
}

/**
 * PostgreSQL and Temporal for this process tree: the configured ones when DATABASE_URL / TEMPORAL_ADDRESS are
 * set, otherwise an embedded PostgreSQL and a Temporal dev server keeping their state under DATA_DIR.
 */
export async function provideInfrastructure(
  config: Config,
  logger: Logger,
  /** Called once the embedded servers' processes run (they boot for seconds more), or at once when there are none. */
  onSpawned: () => void = () => undefined,
): Promise<Infrastructure> {
  let toSpawn = (config.database.url ? 0 : 1) + (config.temporal.address ? 0 : 1);
  const spawned = () => {
    toSpawn -= 1;
    if (toSpawn === 0) onSpawned();
  };
  if (toSpawn === 0) onSpawned();
  const stops: (() => Promise<void>)[] = [];
  const started: Record<string, string> = {};
  const stop = async () => {
    for (const s of stops.reverse()) await s().catch((err: unknown) => logger.warn({ err }, 'stop failed'));
  };
  // PostgreSQL and the Temporal dev server start side by side: neither needs the other, and each takes seconds.
  const postgres = async (): Promise<string> => {
    if (config.database.url) return config.database.url;
    // Loaded only when used: a deployment with DATABASE_URL and TEMPORAL_ADDRESS never touches them.
    const { startEmbeddedPostgres } = await import('./embedded-postgres.ts');
    const pg = await startEmbeddedPostgres({
      dir: path.join(config.dataDir, 'postgres', 'pgdata'),
      port: config.database.embeddedPort,
      logger,
      database: 'wathiq',
      onSpawned: once(spawned),
    });
    stops.push(() => pg.stop());
    markStartup('postgres ready');
    started.postgres = `postgres://127.0.0.1:${config.database.embeddedPort}/wathiq (embedded, data in ${path.join(config.dataDir, 'postgres')})`;
    return pg.localUrl('wathiq');
  };
  const temporalServer = async (): Promise<string> => {
    if (config.temporal.address) return config.temporal.address;
    const { startTemporalDevServer } = await import('./temporal-dev-server.ts');
    const temporal = await startTemporalDevServer({
      cliPath: config.temporal.cliPath,
      port: config.temporal.devPort,
      uiPort: config.temporal.uiPort,
      namespace: config.temporal.namespace,
      dbFile: path.join(config.dataDir, 'temporal', 'temporal.db'),
      logger,
      onSpawned: once(spawned),
    });
    stops.push(() => temporal.stop());
    markStartup('temporal ready');
    started.temporal = `${temporal.address} (dev server, state in ${path.join(config.dataDir, 'temporal')})`;
    if (temporal.uiUrl) started['temporal ui'] = temporal.uiUrl;
    return temporal.address;
  };
  try {
    // Both settle before a failure is thrown, so whatever did start is stopped below.
    const [db, temporal] = await Promise.allSettled([postgres(), temporalServer()]);
    if (db.status === 'rejected') throw db.reason;
    if (temporal.status === 'rejected') throw temporal.reason;
    const databaseUrl = db.value;
    const temporalAddress = temporal.value;
    return { databaseUrl, temporalAddress, started, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

function once(f: () => void): () => void {
  let called = false;
  return () => {
    if (called) return;
    called = true;
    f();
  };
}
