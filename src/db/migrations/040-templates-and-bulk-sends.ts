import type { Knex } from 'knex';

/**
 * Templates and bulk send. A template is prepared once (the PDF, titles, settings and roles instead of people) and
 * changes only by new versions: `template_versions` rows are never updated, so a document made from version 3 keeps
 * reading version 3 (`documents.template_id`, `documents.template_version`). A bulk send makes one document per row
 * of a validated list; `bulk_send_rows` holds each row's recipients (personal data stays here, never in a workflow
 * history) and the document made for it, at most one per row (the row is the idempotency key).
 *
 * `whatsapp_bulk_reservations` and `whatsapp_bulk_pacing` pace bulk sends against WhatsApp's limits per sending
 * number: the recipients bulk sends reserved in the rolling 24 hours (the messaging tier counts unique recipients),
 * and the next free slot of the throughput share with the factor by which Meta's rate-limit answers slowed it.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('templates', (t) => {
    t.uuid('id').primary();
    t.uuid('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.integer('current_version').notNullable();
    t.timestamp('archived_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['account_id', 'created_at']);
  });
  await knex.schema.createTable('template_versions', (t) => {
    t.uuid('template_id').notNullable().references('templates.id').onDelete('CASCADE');
    t.integer('version').notNullable();
    t.string('title_ar', 255).notNullable();
    t.string('title_en', 255).notNullable();
    t.string('department', 32);
    t.string('workflow_type', 16).notNullable();
    t.integer('expires_in_days').notNullable();
    t.jsonb('reminders');
    t.boolean('allow_delegation').notNullable().defaultTo(false);
    t.jsonb('cc').notNullable().defaultTo(knex.raw("'[]'::jsonb"));
    t.jsonb('roles').notNullable();
    t.string('file_key', 512).notNullable();
    t.string('file_name', 255);
    t.bigInteger('file_size').notNullable();
    t.string('file_sha256', 64).notNullable();
    t.integer('page_count').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['template_id', 'version']);
  });
  await knex.schema.alterTable('documents', (t) => {
    t.uuid('template_id').references('templates.id').onDelete('SET NULL');
    t.integer('template_version');
  });

  await knex.schema.createTable('bulk_sends', (t) => {
    t.uuid('id').primary();
    t.uuid('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.uuid('template_id').notNullable().references('templates.id').onDelete('CASCADE');
    t.integer('template_version').notNullable();
    t.string('status', 24).notNullable();
    t.integer('rows_total').notNullable();
    t.timestamp('resumes_at', { useTz: true });
    t.string('workflow_id', 200).notNullable();
    t.timestamp('cancelled_at', { useTz: true });
    t.timestamp('completed_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['account_id', 'created_at']);
  });
  await knex.schema.createTable('bulk_send_rows', (t) => {
    t.uuid('bulk_send_id').notNullable().references('bulk_sends.id').onDelete('CASCADE');
    t.integer('row_number').notNullable();
    t.string('status', 16).notNullable();
    t.jsonb('input');
    t.jsonb('errors');
    t.uuid('document_id').references('documents.id').onDelete('SET NULL');
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['bulk_send_id', 'row_number']);
    t.index(['bulk_send_id', 'status', 'row_number']);
  });
  await knex.raw(
    'CREATE UNIQUE INDEX bulk_send_rows_document ON bulk_send_rows (document_id) WHERE document_id IS NOT NULL',
  );

  await knex.schema.createTable('whatsapp_bulk_reservations', (t) => {
    t.bigIncrements('id').primary();
    t.string('sender', 64).notNullable();
    t.string('phone', 20).notNullable();
    t.uuid('bulk_send_id');
    t.timestamp('reserved_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['sender', 'reserved_at']);
  });
  await knex.schema.createTable('whatsapp_bulk_pacing', (t) => {
    t.string('sender', 64).primary();
    t.timestamp('next_slot_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.double('rate_factor').notNullable().defaultTo(1);
    t.timestamp('factor_changed_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  // The messaging tier counts the unique recipients of the last 24 hours: read by time, not by approver.
  await knex.raw(
    "CREATE INDEX whatsapp_messages_outbound_created ON whatsapp_messages (created_at) WHERE direction = 'out'",
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS whatsapp_messages_outbound_created');
  await knex.schema.dropTableIfExists('whatsapp_bulk_pacing');
  await knex.schema.dropTableIfExists('whatsapp_bulk_reservations');
  await knex.schema.dropTableIfExists('bulk_send_rows');
  await knex.schema.dropTableIfExists('bulk_sends');
  await knex.schema.alterTable('documents', (t) => {
    t.dropColumn('template_version');
    t.dropColumn('template_id');
  });
  await knex.schema.dropTableIfExists('template_versions');
  await knex.schema.dropTableIfExists('templates');
}
