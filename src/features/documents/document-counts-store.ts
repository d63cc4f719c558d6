import type { Db } from '../../db/knex.ts';

/**
 * Documents per status across every account, for the `wathiq_documents` gauge: one aggregate query, read-only,
 * no account in the answer.
 */
export async function countDocumentsByStatus(db: Db): Promise<Record<string, number>> {
  const rows = await db('documents')
    .select('status')
    .count<{ status: string; count: number | string }[]>('* as count')
    .groupBy('status');
  return Object.fromEntries(rows.map((row) => [row.status, Number(row.count)]));
}
