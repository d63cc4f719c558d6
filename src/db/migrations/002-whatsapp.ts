import type { Knex } from 'knex';

/**
 * WhatsApp delivery evidence. Meta reports each outbound message's statuses (sent, delivered, read, failed) in
 * separate notifications that can arrive out of order, and even before the send call has returned the message
 * id. Every status is kept here as received, keyed by message id rather than by a foreign key, so none is lost;
 * `whatsapp_messages.status` holds the furthest one for quick reads.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('whatsapp_message_statuses', (t) => {
    t.bigIncrements('id').primary();
    t.string('wamid', 128).notNullable();
    t.string('status', 16).notNullable();
    t.timestamp('status_at', { useTz: true }).notNullable();
    t.string('recipient', 20);
    t.jsonb('errors');
    t.timestamp('received_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['wamid', 'status']);
  });
  await knex.raw(`ALTER TABLE whatsapp_message_statuses ADD CONSTRAINT whatsapp_message_statuses_status_check
    CHECK (status IN ('sent','delivered','read','failed'))`);
  await knex.raw(`ALTER TABLE whatsapp_messages ADD CONSTRAINT whatsapp_messages_direction_check
    CHECK (direction IN ('in','out'))`);
  // The development outbox lists outbound messages newest first.
  await knex.schema.alterTable('whatsapp_messages', (t) => {
    t.index(['direction', 'id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('whatsapp_messages', (t) => {
    t.dropIndex(['direction', 'id']);
  });
  await knex.raw('ALTER TABLE whatsapp_messages DROP CONSTRAINT IF EXISTS whatsapp_messages_direction_check');
  await knex.schema.dropTableIfExists('whatsapp_message_statuses');
}
