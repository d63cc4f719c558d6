import type { Knex } from 'knex';

/**
 * Copies to others: `documents.cc`, the people besides the approvers who receive the signed PDF
 * over WhatsApp once the document is approved — a JSON array of `{phone, language, name}` (E.164 digits, `ar`,
 * `en` or null for automatic, an optional name for the greeting), at most LIMITS.ccMax, `[]` for none.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('documents', (t) => {
    t.jsonb('cc').notNullable().defaultTo(knex.raw("'[]'::jsonb"));
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('documents', (t) => {
    t.dropColumn('cc');
  });
}
