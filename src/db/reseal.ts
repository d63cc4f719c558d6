import type { SecretBox } from '../auth/secret-box.ts';
import type { Db, Knex } from './knex.ts';
import { rewriteRows, type RowRewrite } from './rewrite-rows.ts';
import { SEALED_COLUMNS, type SealedColumn } from './sealed-columns.ts';

/** What the reseal did to one sealed column. */
export interface ResealCount {
  table: string;
  column: string;
  /** Sealed again with the current key by this run. */
  resealed: number;
  /** Changed by the service between this run's read and its write (rewritten by it, so left alone). */
  changedMeanwhile: number;
  /** Could not be opened with the configured keys (their key is gone, or they were tampered with). */
  failed: number;
  /** The keys of the first failures, to look them up. */
  failedKeys: string[];
  /** After the run: how many values each key id seals. */
  keysInUse: Record<string, number>;
}

export interface ResealReport {
  currentKeyId: string;
  columns: ResealCount[];
  /** Summed over every column: a key absent here may be dropped from ENCRYPTION_KEYS. */
  keysInUse: Record<string, number>;
  resealed: number;
  failed: number;
}

/** How many values each key id seals, per column (reads only the key id, decrypts nothing). */
export async function sealedKeyCensus(
  db: Db,
  columns: readonly SealedColumn[] = SEALED_COLUMNS,
): Promise<Map<SealedColumn, Record<string, number>>> {
  const census = new Map<SealedColumn, Record<string, number>>();
  for (const c of columns) {
    const { rows } = await db.raw<{ rows: { key_id: string; n: number | string }[] }>(
      `SELECT split_part(??, '.', 2) AS key_id, count(*) AS n FROM ?? WHERE ?? IS NOT NULL GROUP BY 1 ORDER BY 1`,
      [c.column, c.table, c.column],
    );
    census.set(c, Object.fromEntries(rows.map((r) => [r.key_id, Number(r.n)])));
  }
  return census;
}

/**
 * Seals every stored sealed value again with the current key (the first of ENCRYPTION_KEYS), so an older key can be
 * dropped. Safe while the service runs: each batch is its own statement, and a value is replaced only if it still
 * holds what was read (one the service rewrote meanwhile is left alone; it was sealed with the service's key).
 * Safe to run again: values already under the current key are not read. `onProgress` hears each batch.
 */
export async function resealAll(
  db: Knex,
  secrets: SecretBox,
  options: {
    batch?: number;
    columns?: readonly SealedColumn[];
    onProgress?: (count: ResealCount) => void;
  } = {},
): Promise<ResealReport> {
  const columns = options.columns ?? SEALED_COLUMNS;
  const counts: ResealCount[] = [];
  for (const c of columns) counts.push(await resealColumn(db, secrets, c, options));
  const census = await sealedKeyCensus(db, columns);
  const keysInUse: Record<string, number> = {};
  for (const count of counts) {
    const column = columns.find((c) => c.table === count.table && c.column === count.column)!;
    count.keysInUse = census.get(column) ?? {};
    for (const [id, n] of Object.entries(count.keysInUse)) keysInUse[id] = (keysInUse[id] ?? 0) + n;
  }
  return {
    currentKeyId: secrets.currentKeyId,
    columns: counts,
    keysInUse,
    resealed: counts.reduce((n, c) => n + c.resealed, 0),
    failed: counts.reduce((n, c) => n + c.failed, 0),
  };
}

const MAX_FAILED_KEYS = 20;

async function resealColumn(
  db: Knex,
  secrets: SecretBox,
  c: SealedColumn,
  options: { batch?: number; onProgress?: (count: ResealCount) => void },
): Promise<ResealCount> {
  const batch = options.batch ?? 500;
  const count: ResealCount = {
    table: c.table,
    column: c.column,
    resealed: 0,
    changedMeanwhile: 0,
    failed: 0,
    failedKeys: [],
    keysInUse: {},
  };
  const current = `wqs1.${secrets.currentKeyId}.%`;
  let after: string | number | undefined;
  for (;;) {
    const q = db(c.table)
      .whereNotNull(c.column)
      .whereNot(c.column, 'like', current)
      .orderBy(c.key)
      .limit(batch)
      .select<Record<string, unknown>[]>([...new Set([c.key, c.column, ...c.contextColumns])]);
    if (after !== undefined) void q.where(c.key, '>', after);
    const rows = await q;
    if (rows.length === 0) return count;
    const rewrites: RowRewrite[] = [];
    for (const row of rows) {
      const key = row[c.key] as string | number;
      const old = row[c.column] as string;
      const context = c.context(row);
      try {
        rewrites.push({ key, values: [secrets.seal(secrets.open(old, context), context)], expect: old });
      } catch {
        count.failed++;
        if (count.failedKeys.length < MAX_FAILED_KEYS) count.failedKeys.push(String(key));
      }
    }
    const changed = await rewriteRows(db, c.table, { column: c.key, type: c.keyType }, [c.column], rewrites, {
      guard: c.column,
    });
    count.resealed += changed;
    count.changedMeanwhile += rewrites.length - changed;
    options.onProgress?.(count);
    after = rows[rows.length - 1]![c.key] as string | number;
  }
}
