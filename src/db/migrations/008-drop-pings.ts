import type { Knex } from 'knex';

/**
 * The diagnostic ping (POST /pings, a workflow writing one row) is gone: GET /health proves PostgreSQL and Temporal
 * answer, and the approval itself proves the rest. Its table goes with it.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('pings');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.createTable('pings', (t) => {
    t.uuid('id').primary();
    t.uuid('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.string('workflow_id', 128).notNullable().unique();
    t.string('message', 255).notNullable();
    t.timestamp('recorded_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
}
