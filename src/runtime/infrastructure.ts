import path from 'node:path';
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';

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
export async function provideInfrastructure(config: Config, logger: Logger): Promise<Infrastructure> {
  const stops: (() => Promise<void>)[] = [];
  const started: Record<string, string> = {};
  const stop = async () => {
    for (const s of stops.reverse()) await s().catch((err: unknown) => logger.warn({ err }, 'stop failed'));
  };
  try {
    let databaseUrl = config.database.url;
    if (!databaseUrl) {
      // Loaded only when used: a deployment with DATABASE_URL and TEMPORAL_ADDRESS never touches them.
      const { startEmbeddedPostgres } = await import('./embedded-postgres.ts');
      const pg = await startEmbeddedPostgres({
        dir: path.join(config.dataDir, 'postgres', 'pgdata'),
        port: config.database.embeddedPort,
        logger,
        database: 'wathiq',
      });
      stops.push(() => pg.stop());
      databaseUrl = pg.url('wathiq');
      started.postgres = `postgres://127.0.0.1:${config.database.embeddedPort}/wathiq (embedded, data in ${path.join(config.dataDir, 'postgres')})`;
    }

    let temporalAddress = config.temporal.address;
    if (!temporalAddress) {
      const { startTemporalDevServer } = await import('./temporal-dev-server.ts');
      const temporal = await startTemporalDevServer({
        cliPath: config.temporal.cliPath,
        port: config.temporal.devPort,
        uiPort: config.temporal.uiPort,
        namespace: config.temporal.namespace,
        dbFile: path.join(config.dataDir, 'temporal', 'temporal.db'),
        logger,
      });
      stops.push(() => temporal.stop());
      temporalAddress = temporal.address;
      started.temporal = `${temporal.address} (dev server, state in ${path.join(config.dataDir, 'temporal')})`;
      if (temporal.uiUrl) started['temporal ui'] = temporal.uiUrl;
    }
    return { databaseUrl, temporalAddress, started, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
