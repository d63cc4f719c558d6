import type { Knex } from 'knex';

/**
 * A send Meta refused for a rate limit keeps the mark after a retry is accepted (`status_error` is cleared then), so
 * the bulk-send pace sees every refusal however quickly its retry succeeded. The partial index makes "the latest
 * refusal" one index read.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('whatsapp_messages', (t) => {
    t.timestamp('rate_limited_at', { useTz: true });
  });
  await knex.raw(
    'CREATE INDEX whatsapp_messages_rate_limited ON whatsapp_messages (rate_limited_at) WHERE rate_limited_at IS NOT NULL',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX whatsapp_messages_rate_limited');
  await knex.schema.alterTable('whatsapp_messages', (t) => {
    t.dropColumn('rate_limited_at');
  });
}
