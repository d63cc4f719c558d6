import type { Knex } from '../../db/knex.ts';

/**
 * The lock a bulk send's creation holds from its insert to its commit (the workflow starts inside it). The
 * workflow's first activity takes it too, so it reads the bulk send only once the creation has committed or
 * rolled back: found, it goes on; not found, the creation never took effect and the run ends.
 */
export async function lockCreation(trx: Knex.Transaction, bulkSendId: string): Promise<void> {
  await trx.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 0))', [`wathiq-bulk-send:${bulkSendId}`]);
}
