import type { Knex } from 'knex';

/**
 * Approver actions decided and recorded by the API in one PostgreSQL transaction, the workflow told afterwards.
 *
 * `approval_signals` is the outbox of what the workflow must hear: a row is written in the transaction that
 * records the action, and `sent_at` is set once Temporal accepted the signal. The API process that took the
 * action sends it right after commit; a relay sends any row still unsent (a crash between commit and signal).
 *
 * `approval_run_protocols` says how a document's run takes actions: a row (`signal`) is written by the run's first
 * activity when the run's code follows actions recorded here; a document without one runs code that takes them as
 * the `act` update (runs started by earlier versions, which stay pinned to them).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('approval_signals', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('document_id').notNullable().references('documents.id').onDelete('CASCADE');
    t.string('workflow_id', 255).notNullable();
    t.string('signal', 64).notNullable();
    t.jsonb('payload').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('sent_at', { useTz: true });
  });
  await knex.raw(
    'CREATE INDEX approval_signals_unsent ON approval_signals (created_at) WHERE sent_at IS NULL',
  );
  await knex.raw('CREATE INDEX approval_signals_document ON approval_signals (document_id)');
  await knex.schema.createTable('approval_run_protocols', (t) => {
    t.uuid('document_id').primary().references('documents.id').onDelete('CASCADE');
    t.string('protocol', 16).notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw(`ALTER TABLE approval_run_protocols ADD CONSTRAINT approval_run_protocols_protocol_check
    CHECK (protocol IN ('signal'))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('approval_run_protocols');
  await knex.schema.dropTableIfExists('approval_signals');
}
