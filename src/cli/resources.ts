import path from 'node:path';
import pg from 'pg';
import { secretBoxFromSettings } from '../auth/secret-box.ts';
import type { Config } from '../config.ts';
import { createDb, type Knex } from '../db/knex.ts';
import { migrateLatest } from '../db/migrate.ts';
import { createLogger } from '../logger.ts';
import { startEmbeddedPostgres } from '../runtime/embedded-postgres.ts';
import { createTemporalClient, type TemporalClientHandle } from '../temporal/client.ts';
import { temporalConnectionOptions } from '../temporal/connection-options.ts';

/**
 * The database the CLI works on: DATABASE_URL, or the embedded one (the running `npm start`'s when it is up,
 * otherwise started just for this command). Migrations are applied first, as `npm start` does.
 */
export async function withDatabase<T>(config: Config, run: (db: Knex) => Promise<T>): Promise<T> {
  const logger = createLogger({ logLevel: 'warn' });
  let url = config.database.url;
  let stopEmbedded: (() => Promise<void>) | undefined;
  if (!url) {
    const embeddedUrl = `postgres://postgres:wathiq-embedded@127.0.0.1:${config.database.embeddedPort}/wathiq`;
    const probe = new pg.Client({ connectionString: embeddedUrl, connectionTimeoutMillis: 1000 });
    const running = await probe.connect().then(
      () => true,
      () => false,
    );
    await probe.end().catch(() => undefined);
    if (running) url = embeddedUrl;
    else {
      const embedded = await startEmbeddedPostgres({
        dir: path.join(config.dataDir, 'postgres', 'pgdata'),
        port: config.database.embeddedPort,
        logger,
        database: 'wathiq',
      });
      url = embedded.url('wathiq');
      stopEmbedded = () => embedded.stop();
    }
  }
  const db = createDb(url, { poolMax: 2, applicationName: 'wathiq-cli' });
  try {
    await migrateLatest(db, { secrets: secretBoxFromSettings(config.encryption) });
    return await run(db);
  } finally {
    await db.destroy();
    await stopEmbedded?.();
  }
}

/** A client of TEMPORAL_ADDRESS (default: `npm start`'s dev server), closed when `run` ends. */
export async function withTemporal<T>(
  config: Config,
  run: (temporal: TemporalClientHandle) => Promise<T>,
): Promise<T> {
  const temporal = createTemporalClient({
    ...(config.temporal.address
      ? temporalConnectionOptions({ ...config.temporal, address: config.temporal.address })
      : { address: `127.0.0.1:${config.temporal.devPort}` }),
    namespace: config.temporal.namespace,
  });
  try {
    return await run(temporal);
  } finally {
    await temporal.close();
  }
}
