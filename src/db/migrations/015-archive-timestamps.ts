import type { Knex } from 'knex';

/**
 * `archive_timestamps`: B-LTA final files and when the certificate of their last document time-stamp's authority
 * expires. The archive renewal schedule adds a fresh document time-stamp to those due within the margin
 * (ARCHIVE_RENEWAL_MARGIN_DAYS). A table of its own, so the documents table is not widened for it.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('archive_timestamps', (t) => {
    t.uuid('document_id').primary().references('id').inTable('documents').onDelete('CASCADE');
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.integer('renewals').notNullable().defaultTo(0);
    t.timestamp('renewed_at', { useTz: true });
    t.text('last_error');
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw('CREATE INDEX archive_timestamps_expires_at_index ON archive_timestamps (expires_at)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('archive_timestamps');
}
