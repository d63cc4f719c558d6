import type { Knex } from 'knex';

/**
 * When an inbound WhatsApp message (a button reply) was handled to the end: its outcome known (the action taken,
 * refused, or the reply ignored). Until then a delivery of the same message id is handled again, so a reply whose
 * handling failed half-way (PostgreSQL gone between recording the message and taking the action, where even
 * forgetting the message cannot be written) is not dropped as a replay when Meta delivers it again.
 *
 * Rows written before this migration were handled or forgotten by the code of the time: they count as handled.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('whatsapp_messages', (t) => {
    t.timestamp('handled_at', { useTz: true });
  });
  await knex.raw(`UPDATE whatsapp_messages SET handled_at = created_at WHERE direction = 'in'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('whatsapp_messages', (t) => t.dropColumn('handled_at'));
}
