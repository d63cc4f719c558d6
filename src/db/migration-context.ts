import type { SecretBox } from '../auth/secret-box.ts';
import type { Knex } from './knex.ts';
import { rewriteRows, type RowRewrite } from './rewrite-rows.ts';

/**
 * What a migration may need besides the database: the secret box, for migrations that seal values already stored
 * (the service and `npm run cli -- migrate` pass it; a new, empty database needs none).
 */
export interface MigrationContext {
  secrets?: SecretBox;
}

/** The box, or a refusal that says how to run the migration with one (`count` values wait to be sealed). */
export function needsSecrets(context: MigrationContext, what: string, count: number): SecretBox {
  if (context.secrets) return context.secrets;
  throw new Error(
    `This migration seals ${count} stored ${what} and needs the encryption keys: run it with the service's configuration (npm start, or npm run cli -- migrate with ENCRYPTION_KEYS set)`,
  );
}

/** One column copied into another of the same table, sealed or opened on the way. */
export interface ColumnCopy {
  table: string;
  key: { column: string; type: 'uuid' | 'bigint' };
  from: string;
  to: string;
  /** Columns read besides the key and `from` (the sealing context's). */
  read?: readonly string[];
  context(row: Record<string, unknown>): string;
}

/**
 * Copies `from` into `to` sealed, row by row in pages of `page` (keyset on `key`), for a migration that replaces a
 * plain column with a sealed one: `transform` gives the text to seal (null: leave `to` null). Returns the rows sealed.
 */
export async function sealColumn(
  knex: Knex,
  context: MigrationContext,
  spec: ColumnCopy & { transform?(value: unknown): string | null },
  page = 1000,
): Promise<number> {
  const pending = await knex(spec.table).whereNotNull(spec.from).count<{ n: string | number }[]>({ n: '*' });
  const total = Number(pending[0]?.n ?? 0);
  if (total === 0) return 0;
  const secrets = needsSecrets(context, `${spec.table}.${spec.from} values`, total);
  let after: unknown;
  let sealed = 0;
  for (;;) {
    const q = knex(spec.table)
      .whereNotNull(spec.from)
      .orderBy(spec.key.column)
      .limit(page)
      .select<Record<string, unknown>[]>([spec.key.column, spec.from, ...(spec.read ?? [])]);
    if (after !== undefined) void q.where(spec.key.column, '>', after as Knex.Value);
    const rows = await q;
    if (rows.length === 0) return sealed;
    const rewrites: RowRewrite[] = [];
    for (const row of rows) {
      const text = spec.transform ? spec.transform(row[spec.from]) : String(row[spec.from]);
      if (text === null) continue;
      rewrites.push({
        key: row[spec.key.column] as string | number,
        values: [secrets.seal(text, spec.context(row))],
      });
    }
    sealed += await rewriteRows(knex, spec.table, spec.key, [spec.to], rewrites);
    after = rows[rows.length - 1]![spec.key.column];
  }
}

/** The reverse of `sealColumn`, for down migrations: opens `from` into `to`. */
export async function openColumn(
  knex: Knex,
  context: MigrationContext,
  /** `cast`: the SQL type `to` is cast to (jsonb: the text opened is JSON). */
  spec: ColumnCopy & { cast?: string },
): Promise<void> {
  const rows = await knex(spec.table)
    .whereNotNull(spec.from)
    .select<Record<string, unknown>[]>([spec.key.column, spec.from, ...(spec.read ?? [])]);
  if (rows.length === 0) return;
  const secrets = needsSecrets(context, `${spec.table}.${spec.from} values`, rows.length);
  await rewriteRows(
    knex,
    spec.table,
    spec.key,
    [spec.to],
    rows.map((row) => {
      const text = secrets.open(row[spec.from] as string, spec.context(row));
      return { key: row[spec.key.column] as string | number, values: [text] };
    }),
    spec.cast ? { casts: { [spec.to]: spec.cast } } : {},
  );
}
