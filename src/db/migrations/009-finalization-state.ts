import type { Knex } from 'knex';

/**
 * A finalization that failed for good leaves the document `in_progress` and says so: `finalization_state`
 * (`failed`, or `succeeded` once a retry produced the signed PDF; null when finalization never failed), the
 * failure's message and when it happened. Written by the approval workflow's activities only.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('documents', (t) => {
    t.string('finalization_state', 16).nullable();
    t.text('finalization_error').nullable();
    t.timestamp('finalization_failed_at', { useTz: true }).nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('documents', (t) => {
    t.dropColumn('finalization_state');
    t.dropColumn('finalization_error');
    t.dropColumn('finalization_failed_at');
  });
}
