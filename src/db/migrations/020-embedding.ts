import type { Knex } from 'knex';

/**
 * Embedding: `approvers.notify` — false means Wathiq sends that approver no WhatsApp message,
 * the account's own app shows them the approval page link (GET /approvers/{id}/link); `accounts.embed_origins` —
 * the https origins allowed to frame the approval page (its CSP `frame-ancestors`), empty for none.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('approvers', (t) => {
    t.boolean('notify').notNullable().defaultTo(true);
  });
  await knex.schema.alterTable('accounts', (t) => {
    t.specificType('embed_origins', 'text[]').notNullable().defaultTo(knex.raw("'{}'::text[]"));
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('accounts', (t) => {
    t.dropColumn('embed_origins');
  });
  await knex.schema.alterTable('approvers', (t) => {
    t.dropColumn('notify');
  });
}
