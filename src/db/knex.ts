import knexFactory, { type Knex } from 'knex';
import pg from 'pg';

export type { Knex };
/** Every store takes this: the pool, or a transaction opened on it. */
export type Db = Knex | Knex.Transaction;

// bigint (int8) columns (sequence numbers, delivery ids) arrive as strings by default; they fit in a JS number.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

export interface DbOptions {
  poolMax?: number;
  /**
   * What PostgreSQL shows for these connections (`pg_stat_activity.application_name`, `%a` in log_line_prefix):
   * `wathiq` and the role (`wathiq-api`, `wathiq-worker`), so an operator can tell whose connections they are.
   */
  applicationName?: string;
}

export function createDb(connectionString: string, options: DbOptions = {}): Knex {
  return knexFactory({
    client: 'pg',
    connection: { connectionString, application_name: options.applicationName ?? 'wathiq' },
    pool: { min: 0, max: options.poolMax ?? 10 },
    acquireConnectionTimeout: 10_000,
  });
}
