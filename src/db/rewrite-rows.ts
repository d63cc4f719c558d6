import type { Db, Knex } from './knex.ts';

/** One row to rewrite: its key, the new values (in the order of `columns`), and optionally the value it must still hold. */
export interface RowRewrite {
  key: string | number;
  values: unknown[];
  /** When given, the row is rewritten only while `guard.column` still holds this value. */
  expect?: unknown;
}

/**
 * Rewrites many rows of one table with one statement per `batch` rows (`UPDATE … FROM (VALUES …)`), for the
 * migrations and the reseal, which compute each row's new values in JavaScript (a seal) and cannot do it in SQL.
 * Returns how many rows changed. Identifiers come from this code, never from input.
 */
export async function rewriteRows(
  db: Db,
  table: string,
  key: { column: string; type: 'uuid' | 'bigint' },
  columns: readonly string[],
  rows: readonly RowRewrite[],
  options: { guard?: string; batch?: number; casts?: Readonly<Record<string, string>> } = {},
): Promise<number> {
  const batch = options.batch ?? 500;
  let changed = 0;
  for (let i = 0; i < rows.length; i += batch) {
    const slice = rows.slice(i, i + batch);
    const width = 1 + columns.length + (options.guard ? 1 : 0);
    const tuple = `(${Array.from({ length: width }, () => '?').join(', ')})`;
    const names = ['k', ...columns.map((_, j) => `c${j}`), ...(options.guard ? ['g'] : [])];
    const bindings: Knex.RawBinding[] = slice.flatMap((r) => [
      String(r.key),
      ...r.values,
      ...(options.guard ? [r.expect ?? null] : []),
    ]) as Knex.RawBinding[];
    const cast = (c: string) => (options.casts?.[c] ? `::${options.casts[c]}` : '');
    const set = columns.map((c, j) => `"${c}" = v.c${j}${cast(c)}`).join(', ');
    const guard = options.guard ? ` AND t."${options.guard}" = v.g` : '';
    const result = await db.raw<{ rowCount: number }>(
      `UPDATE "${table}" t SET ${set}
         FROM (VALUES ${slice.map(() => tuple).join(', ')}) AS v(${names.join(', ')})
        WHERE t."${key.column}" = v.k::${key.type}${guard}`,
      bindings,
    );
    changed += result.rowCount;
  }
  return changed;
}
