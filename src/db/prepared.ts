import type pg from 'pg';
import type { Db } from './knex.ts';

interface PooledClient {
  acquireConnection(): Promise<pg.Client>;
  releaseConnection(connection: pg.Client): Promise<void>;
}

/**
 * Runs a named prepared statement on a connection of the pool: PostgreSQL parses and plans it once per connection
 * instead of on every request, and no query builder runs. For the reads the API serves most. `text` uses $1, $2, …
 * each once and in order, and names its columns (never `*`: a prepared statement's columns are fixed when it is
 * prepared). Inside a transaction it runs as a plain query on the transaction's connection.
 */
export async function preparedRows<R>(
  db: Db,
  name: string,
  text: string,
  values: readonly (string | number | null)[],
): Promise<R[]> {
  if (db.isTransaction) {
    const positional = text.replace(/\$(\d+)/g, '?');
    const { rows } = await db.raw<{ rows: R[] }>(positional, [...values]);
    return rows;
  }
  const client = db.client as PooledClient;
  const connection = await client.acquireConnection();
  try {
    const { rows } = await connection.query<R & pg.QueryResultRow>({ name, text, values: [...values] });
    return rows;
  } finally {
    await client.releaseConnection(connection);
  }
}
