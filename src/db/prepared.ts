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
    return await queryByCallback<R>(connection, { name, text, values: [...values] });
  } finally {
    await client.releaseConnection(connection);
  }
}

/**
 * `connection.query` with a callback, as knex calls it, rather than the promise pg makes when given none. Read
 * through that promise (and the `.catch` pg chains to it), a result's rows outlived two young-generation collections
 * although nothing reached them by then, so V8 moved them to the old generation, which only a full collection frees:
 * under the API's read load about 4 MB promoted at every scavenge, scavenges of 7–9 ms (each stops every request in
 * flight) and a full collection every few seconds. Why pg's promise keeps them we did not pin down; with a callback,
 * 50 loops reading through the pool promoted nothing and scavenged in 0.4–0.7 ms on average, against 8 ms
 * (`--trace-gc-nvp`; bench/README.md).
 */
function queryByCallback<R>(connection: pg.Client, config: pg.QueryConfig): Promise<R[]> {
  return new Promise((resolve, reject) => {
    connection.query<R & pg.QueryResultRow>(config, (err, result) =>
      err ? reject(err) : resolve(result.rows),
    );
  });
}

/**
 * The query options that name a statement knex sends (`builder.options(named(…))`): PostgreSQL
 * parses and plans it once per connection instead of on every execution, inside a transaction too. Only for a
 * statement whose text is the same on every call (no IN list or multi-row insert of varying length: pg refuses a
 * name reused for another text), and that lists its columns, never `*` or `RETURNING *`: a prepared statement's
 * result columns are fixed when it is prepared, so a column a later migration adds would fail it with `cached plan
 * must not change result type` on every connection that prepared it until that connection closes.
 */
export function named(name: string): { name: string } {
  return { name: `wathiq_${name}` };
}

/**
 * A row type's every column, checked when compiling: a column added to the type and not to the list fails to
 * compile, so a named statement's explicit list keeps the shape its mapper reads.
 */
export function allColumns<Row>() {
  return <const C extends readonly (keyof Row & string)[]>(
    columns: C &
      ([Exclude<keyof Row, C[number]>] extends [never]
        ? unknown
        : { missing: Exclude<keyof Row, C[number]> }),
  ): C => columns;
}
