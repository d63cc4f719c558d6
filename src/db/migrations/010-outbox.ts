import type { Knex } from 'knex';

/**
 * The outbox: an outbound message's row is written, status `sending`, before the provider is called,
 * and keyed by its idempotency key alone. A message id (`wamid`) is no longer unique across the table:
 *
 * - Outbound: the provider's answer must always be recordable. A provider that repeats a message id for two
 *   different messages made the insert violate the unique constraint, the activity failed after the send, and
 *   every retry sent the message again. Two outbound rows may now carry the same id; a delivery status for that
 *   id applies to both (it cannot say which one it meant).
 * - Inbound: the replay dedupe still needs one row per inbound message id, so uniqueness stays there, as a
 *   partial unique index (`ON CONFLICT (wamid) WHERE direction = 'in'`).
 *
 * A plain index on `wamid` serves the status updates, which look messages up by id.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE whatsapp_messages DROP CONSTRAINT whatsapp_messages_wamid_unique');
  await knex.raw(
    `CREATE UNIQUE INDEX whatsapp_messages_inbound_wamid_unique ON whatsapp_messages (wamid) WHERE direction = 'in'`,
  );
  await knex.raw('CREATE INDEX whatsapp_messages_wamid_index ON whatsapp_messages (wamid)');
}

/** Fails while two outbound rows share a message id: the old constraint cannot hold them. */
export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS whatsapp_messages_wamid_index');
  await knex.raw('DROP INDEX IF EXISTS whatsapp_messages_inbound_wamid_unique');
  await knex.raw(
    'ALTER TABLE whatsapp_messages ADD CONSTRAINT whatsapp_messages_wamid_unique UNIQUE (wamid)',
  );
}
