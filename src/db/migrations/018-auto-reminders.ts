import type { Knex } from 'knex';

/**
 * Automatic reminders: a document's own schedule `{first_after_hours, every_hours, max}`, and
 * an account's default for documents without one. Null means "not set here": a document falls back to its
 * account's default, an account to the AUTO_REMIND_* configuration.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('documents', (t) => {
    t.jsonb('reminders').nullable();
  });
  await knex.schema.alterTable('accounts', (t) => {
    t.jsonb('default_reminders').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('accounts', (t) => {
    t.dropColumn('default_reminders');
  });
  await knex.schema.alterTable('documents', (t) => {
    t.dropColumn('reminders');
  });
}
