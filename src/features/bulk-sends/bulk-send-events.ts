import type { Db } from '../../db/knex.ts';
import { documentEventsStore, type DocumentEvent } from '../events/document-events-store.ts';
import { bulkSendStore, EMPTY_COUNTS, type BulkSend } from './bulk-send-store.ts';
import { serializeBulkSend } from './serialize.ts';

/** Records a bulk send's one closing event, in the caller's transaction (the one that changed its status). */
export async function recordBulkSendEvent(
  db: Db,
  bulk: BulkSend,
  event: 'bulk_send.completed' | 'bulk_send.cancelled',
): Promise<DocumentEvent> {
  const counts = (await bulkSendStore(db).counts([bulk.id])).get(bulk.id) ?? EMPTY_COUNTS;
  return documentEventsStore(db).recordAccountEvent({
    accountId: bulk.accountId,
    event,
    data: { bulk_send: serializeBulkSend(bulk, counts) },
    dedupeKey: `${event}:${bulk.id}`,
  });
}
