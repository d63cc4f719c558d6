import type { Knex } from '../../db/knex.ts';
import { bulkSendStore, EMPTY_COUNTS, type BulkSend } from './bulk-send-store.ts';
import { resultsCsv } from './results-csv.ts';
import { serializeBulkSend, serializeRow, type SerializedBulkSend } from './serialize.ts';

/**
 * What the API and the dashboard show of an account's bulk sends: each with its counts, its rows a page at a time,
 * and the CSV of results. A bulk send of another account reads as one that does not exist (undefined).
 */
export interface Paging {
  limit: number;
  offset: number;
}

export async function findBulkSendView(
  db: Knex,
  accountId: string,
  id: string,
): Promise<{ bulk: BulkSend; view: SerializedBulkSend } | undefined> {
  const store = bulkSendStore(db);
  const bulk = await store.findById(accountId, id);
  if (!bulk) return undefined;
  const counts = (await store.counts([bulk.id])).get(bulk.id) ?? EMPTY_COUNTS;
  return { bulk, view: serializeBulkSend(bulk, counts) };
}

/** Newest first, each with its counts. */
export async function listBulkSendViews(
  db: Knex,
  accountId: string,
  page: Paging,
): Promise<{ items: SerializedBulkSend[]; total: number }> {
  const store = bulkSendStore(db);
  const { items, total } = await store.list(accountId, page);
  const counts = await store.counts(items.map((b) => b.id));
  return { items: items.map((b) => serializeBulkSend(b, counts.get(b.id) ?? EMPTY_COUNTS)), total };
}

/** The newest bulk sends as they are stored, for the dashboard's list (which shows no counts). */
export async function recentBulkSends(db: Knex, accountId: string, limit: number): Promise<BulkSend[]> {
  return (await bulkSendStore(db).list(accountId, { limit, offset: 0 })).items;
}

/** A page of one bulk send's rows in row order, and how many it has; undefined when the bulk send is not found. */
export async function bulkSendRowsPage(db: Knex, accountId: string, id: string, page: Paging) {
  const store = bulkSendStore(db);
  const bulk = await store.findById(accountId, id);
  if (!bulk) return undefined;
  const rows = await store.rows(bulk.id, page);
  return { rows: rows.map(serializeRow), total: bulk.rowsTotal };
}

/** Every row of a bulk send already found for its account, as the CSV of results. */
export async function bulkSendResultsCsv(db: Knex, bulk: BulkSend): Promise<string> {
  return resultsCsv(await bulkSendStore(db).allRows(bulk.id));
}
