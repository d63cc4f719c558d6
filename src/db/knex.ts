import knexFactory, { type Knex } from 'knex';
import pg from 'pg';

export type { Knex };
/** Every store takes this: the pool, or a transaction opened on it. */
export type Db = Knex | Knex.Transaction;

// bigint (int8) columns (sequence numbers, delivery ids) arrive as strings by default; they fit in a JS number.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

export function createDb(connectionString: string, options: { poolMax?: number } = {}): Knex {
  return knexFactory({
    client: 'pg',
    connection: { connectionString, application_name: 'wathiq' },
    pool: { min: 0, max: options.poolMax ?? 10 },
    acquireConnectionTimeout: 10_000,
  });
}
