import type { Knex } from 'knex';

/** What the approval workflow records beyond the first schema: a stamp approver's choice of a generated seal. */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('approvers', (t) => {
    t.boolean('generated_seal').notNullable().defaultTo(false);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('approvers', (t) => {
    t.dropColumn('generated_seal');
  });
}
